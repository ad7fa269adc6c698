// Builds an ONNX Runtime session for each model named on the command line, as an application
// loading the model would (graph resolution, shape inference, initializers, external data).
// Prints "ok PATH" or "error PATH: MESSAGE" per model; exits 1 if any failed.
// Needs onnxruntime-node (scripts/install-test-readers.sh) on NODE_PATH.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
    let failed = false;
    for (const path of process.argv.slice(2)) {
        try {
            const session = await ort.InferenceSession.create(path);
            await session.release();
            console.log(`ok ${path}`);
        } catch (e) {
            failed = true;
            console.log(`error ${path}: ${String(e.message).split('\n')[0]}`);
        }
    }
    process.exit(failed ? 1 : 0);
})();
