/**
 * Runs an ONNX file on raw float32 NCHW inputs with ONNX Runtime, the service's engine, and writes every output
 * as raw float32, so models/training/from_onnx.py can check a rebuilt checkpoint against the file it came from
 * (Debian's Python has no onnxruntime).
 *
 *   npx tsx models/eval/onnx-outputs.ts <model.onnx> <input.f32> <count> <size> <out prefix>
 * writes `<out prefix><output name>.f32` for each output and prints the output names and shapes as JSON.
 */
import { readFile, writeFile } from "node:fs/promises";
import * as ort from "onnxruntime-node";
import { createSession } from "../../src/diagnosis/model/session.js";

const [modelPath, inputPath, count, size, prefix] = process.argv.slice(2);
if (!modelPath || !inputPath || !count || !size || !prefix) {
  throw new Error("usage: onnx-outputs.ts <model.onnx> <input.f32> <count> <size> <out prefix>");
}
const raw = await readFile(inputPath);
const data = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
const session = await createSession(modelPath);
const outputs = await session.run({
  input: new ort.Tensor("float32", data, [Number(count), 3, Number(size), Number(size)]),
});
const shapes: Record<string, readonly number[]> = {};
for (const [name, tensor] of Object.entries(outputs)) {
  const values = tensor.data as Float32Array;
  await writeFile(`${prefix}${name}.f32`, Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  shapes[name] = tensor.dims;
}
console.log(JSON.stringify(shapes));
