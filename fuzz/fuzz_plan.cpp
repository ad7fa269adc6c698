// Target "plan": any text as a plan file (SPEC 5b) for a fixed model that has a bit of
// everything a plan can name: graph initializers big and small, a STRING tensor, a Constant's
// attribute tensor, a subgraph initializer with a name the main graph also uses, a sparse
// initializer and a function's constant. readPlan either fails with a message or gives a plan;
// a plan that planSave accepts, written back as `plan --json` writes it and read again, must
// give the very same layout. The same text is also read for the model plus a second tensor
// with one scope + name (which no plan can name).
//
// With REPACK_FUZZ_PLAN_SEED=FILE set, the target first writes the fixed model's default plan
// to FILE (the seed scripts/fuzz.sh starts the corpus from) and exits.
#include "fuzz_support.h"

#include "core/model/model.h"
#include "core/plan/placement_plan.h"
#include "core/plan/save_plan.h"

#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <fstream>

namespace {

const std::filesystem::path kOut = "/nonexistent/out/model.onnx";

onnx::TensorProto rawTensor(const std::string& name, int32_t dtype, int64_t elements, size_t bytes)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(dtype);
    t.add_dims(elements);
    t.set_raw_data(std::string(bytes, '\x5a'));
    return t;
}

std::unique_ptr<repack::Model> fixedModel(bool duplicate)
{
    auto proto = std::make_unique<onnx::ModelProto>();
    proto->set_ir_version(8);
    proto->add_opset_import()->set_version(17);
    auto* graph = proto->mutable_graph();
    graph->set_name("main");
    *graph->add_initializer() = rawTensor("small", 1, 4, 16);
    *graph->add_initializer() = rawTensor("big", 1, 1024, 4096);
    *graph->add_initializer() = rawTensor("huge", 2, 3 << 20, 3 << 20);
    *graph->add_initializer() = rawTensor("twice", 2, 2000, 2000);
    if (duplicate)
        *graph->add_initializer() = rawTensor("twice", 2, 3000, 3000);
    onnx::TensorProto strings;
    strings.set_name("names");
    strings.set_data_type(8);
    strings.add_dims(2);
    strings.add_string_data("first");
    strings.add_string_data("second");
    *graph->add_initializer() = strings;

    auto* constant = graph->add_node();
    constant->set_op_type("Constant");
    constant->set_name("const");
    auto* value = constant->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = rawTensor("constant", 7, 300, 2400);

    auto* branchNode = graph->add_node();
    branchNode->set_op_type("If");
    branchNode->set_name("cond");
    auto* branch = branchNode->add_attribute();
    branch->set_name("then_branch");
    branch->set_type(onnx::AttributeProto::GRAPH);
    branch->mutable_g()->set_name("then");
    *branch->mutable_g()->add_initializer() = rawTensor("big", 1, 512, 2048);

    auto* sparse = graph->add_sparse_initializer();
    *sparse->mutable_values() = rawTensor("sparse", 1, 600, 2400);
    *sparse->mutable_indices() = rawTensor("sparse_indices", 7, 600, 4800);
    sparse->add_dims(100000);

    auto* function = proto->add_functions();
    function->set_domain("local");
    function->set_name("f");
    auto* fnode = function->add_node();
    fnode->set_op_type("Constant");
    auto* fvalue = fnode->add_attribute();
    fvalue->set_name("value");
    fvalue->set_type(onnx::AttributeProto::TENSOR);
    *fvalue->mutable_t() = rawTensor("weights", 1, 256, 1024);
    return repack::Model::fromProto(std::move(proto), "/nonexistent");
}

const repack::Model& model()
{
    static const std::unique_ptr<repack::Model> m = fixedModel(false);
    return *m;
}

const repack::Model& modelWithDuplicate()
{
    static const std::unique_ptr<repack::Model> m = fixedModel(true);
    return *m;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    if (const char* seed = std::getenv("REPACK_FUZZ_PLAN_SEED")) {
        auto plan = repack::planSave(model(), kOut, {});
        repack::fuzz::require(plan.ok(), "the fixed model has no default plan");
        std::ofstream(seed) << repack::planFileText(model(), *plan, kOut);
        std::exit(0);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace repack;
    using fuzz::require;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (auto other = readPlan(modelWithDuplicate(), text, "plan.json"); !other)
        require(!other.error().message.empty(), "a plan error without a message");
    auto placements = readPlan(model(), text, "plan.json");
    if (!placements) {
        require(!placements.error().message.empty(), "a plan error without a message");
        return 0;
    }
    require(placements->size() == model().tensors().size(), "a plan not parallel to the tensors");

    SaveOptions options;
    options.placements = *placements;
    auto plan = planSave(model(), kOut, options);
    if (!plan)
        return 0;
    const std::string written = planFileText(model(), *plan, kOut);
    auto again = readPlan(model(), written, "written.json");
    require(again.ok(), "readPlan refuses what planFileText wrote");
    SaveOptions replanned;
    replanned.placements = *again;
    auto second = planSave(model(), kOut, replanned);
    require(second.ok(), "planSave refuses the plan it wrote itself");
    for (size_t i = 0; i < plan->tensors.size(); ++i) {
        const PlannedTensor& a = plan->tensors[i];
        const PlannedTensor& b = second->tensors[i];
        require(a.external == b.external, "a written plan moves a tensor inline/external");
        if (!a.external)
            continue;
        require(plan->files[size_t(a.file)] == second->files[size_t(b.file)],
            "a written plan moves a tensor to another file");
        require(a.offset == b.offset && a.length == b.length,
            "a written plan moves a tensor within its file");
    }
    return 0;
}
