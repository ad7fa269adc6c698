// Writes a model with ONNX Runtime's own writer: the session's optimized model (no optimization),
// its initializers of 1 KiB and more in a data file, laid out as ONNX Runtime lays them out.
//   node ort_write.js SRC OUT DATA
// Prints the error and exits 1 on failure. Needs onnxruntime-node on NODE_PATH.
'use strict';
const ort = require('onnxruntime-node');

const [source, output, data] = process.argv.slice(2);
ort.InferenceSession
    .create(source, {
        graphOptimizationLevel: 'disabled',
        optimizedModelFilePath: output,
        extra: {
            session: {
                optimized_model_external_initializers_file_name: data,
                optimized_model_external_initializers_min_size_in_bytes: '1024',
            },
        },
    })
    .then((session) => session.release())
    .catch((e) => {
        console.log(`error: ${String(e.message).split('\n')[0]}`);
        process.exit(1);
    });
