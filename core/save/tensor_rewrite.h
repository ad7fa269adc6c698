// Points a model's tensors at their planned storage, reversibly: each rewritten TensorProto's
// original is kept (moved, not copied) until commit(), so a failed save restores the model
// exactly as it was.
#pragma once

#include "core/plan/save_plan.h"
#include "core/result.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
}

namespace repack {

class DataWriter;
class Model;

class TensorRewrite {
public:
    explicit TensorRewrite(Model& model);
    ~TensorRewrite(); // rolls back unless committed
    TensorRewrite(const TensorRewrite&) = delete;
    TensorRewrite& operator=(const TensorRewrite&) = delete;

    // How external tensors that come back inline get their bytes.
    enum class Inline {
        Read, // read into raw_data now, while their old file still exists
        Spliced, // raw_data left empty: the model writer splices them in from the old file
    };
    // Rewrites every tensor whose storage changes or that goes external: external ones get
    // entries naming `locations[file]`, offset, length (and checksum).
    Status apply(const SavePlan& plan, const std::vector<std::string>& locations,
        DataWriter& writer, const std::map<size_t, std::string>& checksums, Inline comingInline);
    // Renames the data file locations of the rewritten external tensors.
    void relocate(const std::vector<std::string>& locations);

    void rollback();
    void commit();

private:
    struct Entry {
        onnx::TensorProto* tensor;
        std::unique_ptr<onnx::TensorProto> original;
        int file; // data file index, -1 when the tensor becomes inline
    };

    Model& m_model;
    std::vector<Entry> m_entries;
    bool m_done = false;
};

} // namespace repack
