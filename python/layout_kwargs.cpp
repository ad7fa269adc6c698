#include "layout_kwargs.h"

#include "errors.h"
#include "py_model.h"

#include "core/plan/placement_plan.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace repack::python {
namespace {

// A size keyword as the core's request takes it: text, left empty when not given.
void sizeArg(const char* name, const py::object& value, std::string& out)
{
    if (value.is_none())
        return;
    if (py::isinstance<py::bool_>(value))
        raiseUsage(
            std::string(name) + ": expected a size (bytes, or text like '4KiB'), got a bool");
    if (py::isinstance<py::int_>(value)) {
        if (value.cast<py::int_>() < py::int_(0))
            raiseUsage(std::string(name) + ": a size cannot be negative");
        out = py::str(value).cast<std::string>();
    } else if (py::isinstance<py::str>(value)) {
        out = value.cast<std::string>();
        if (out.empty())
            raiseUsage(std::string(name) + ": '' is not a size");
    } else {
        raiseUsage(std::string(name) + ": expected a size (bytes, or text like '4KiB')");
    }
}

std::string textArg(const char* name, const py::object& value)
{
    if (value.is_none())
        return {};
    if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) {
        std::string text
            = py::isinstance<py::str>(value) ? value.cast<std::string>() : toPath(value).string();
        if (text.empty())
            raiseUsage(std::string(name) + ": must not be empty");
        return text;
    }
    raiseUsage(std::string(name) + ": expected a str");
}

// A keyword taking one name or a list of them.
std::vector<std::string> textListArg(const char* name, const py::object& value)
{
    if (value.is_none())
        return {};
    if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__"))
        return {textArg(name, value)};
    if (!py::isinstance<py::iterable>(value))
        raiseUsage(std::string(name) + ": expected a str or a list of them");
    std::vector<std::string> out;
    for (py::handle item : value)
        out.push_back(textArg(name, py::reinterpret_borrow<py::object>(item)));
    return out;
}

// The Python names of the layout keywords, for the core's messages.
constexpr OptionNames kNames{.target = "target",
    .data = "external_data",
    .threshold = "size_threshold_bytes",
    .align = "align",
    .alignThreshold = "align_threshold",
    .order = "order",
    .allInline = "inline",
    .shardSize = "shard_size",
    .dedupe = "dedupe",
    .format = "format",
    .keep = "no layout keyword",
    .compact = "compact",
    .wait = "wait"};

} // namespace

SaveRequest layoutRequest(const LayoutKwargs& args)
{
    SaveRequest request;
    request.target = textArg("target", args.target);
    request.data = textArg("external_data", args.externalData);
    sizeArg("size_threshold_bytes", args.threshold, request.threshold);
    // onnx_ir's default where its keywords are used alone (a target brings its own).
    if (args.threshold.is_none() && !args.externalData.is_none() && args.target.is_none())
        request.threshold = std::to_string(kOnnxIrThreshold);
    sizeArg("align", args.align, request.align);
    sizeArg("align_threshold", args.alignThreshold, request.alignThreshold);
    sizeArg("shard_size", args.shardSize, request.shardSize);
    request.order = textArg("order", args.order);
    request.format = textArg("format", args.format);
    request.noAttributes = !args.attributes;
    request.allInline = args.allInline;
    request.dedupe = args.dedupe;
    request.allowCorrupt = args.allowCorrupt;
    request.compact = textListArg("compact", args.compact);
    // No layout keyword at all: every tensor stays where it is, as ir.save(model, path) does.
    request.keep = args.externalData.is_none() && args.threshold.is_none() && args.align.is_none()
        && args.alignThreshold.is_none() && args.order.is_none() && args.shardSize.is_none()
        && args.target.is_none() && args.format.is_none() && args.plan.is_none() && !args.allInline
        && !args.dedupe && args.attributes;
    return request;
}

SaveOptions requestedOptions(const SaveRequest& request, const fs::path& outputModel)
{
    auto result = applySaveRequest(request, outputModel, kNames);
    if (!result)
        raise(result.error()); // kind Usage: UsageError
    for (const auto& note : result->notes)
        if (PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 2) != 0)
            throw py::error_already_set(); // warnings turned into errors

    result->options.dataOptionName = "external_data=";
    return std::move(result->options);
}

void applyPlan(const py::object& plan, const Model& model, SaveOptions& options)
{
    if (plan.is_none())
        return;
    if (py::isinstance<py::dict>(plan)) {
        const std::string text
            = py::module_::import("json").attr("dumps")(plan).cast<std::string>();
        options.placements = take(readPlan(model, text, "plan"));
        return;
    }
    options.placements = take(readPlanFile(model, toPath(plan)));
}

} // namespace repack::python
