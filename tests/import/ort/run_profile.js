// SPDX-License-Identifier: MIT
//
// Run an ONNX model under onnxruntime-node with profiling on and leave the
// profile JSON at a given path. Called by make_profile.sh; usable alone:
//
//   node run_profile.js --ort DIR --model M.onnx --shape 3,32,32 --out OUT.json
//        [--meta META.json] [--runs N] [--batches 1,4] [--intra N] [--inter N]
//        [--mode sequential|parallel] [--opt disabled|basic|extended|all]
//
// --ort is the folder whose node_modules holds onnxruntime-node. The session
// is created with enableProfiling and a profileFilePrefix in a fresh folder
// next to OUT; ONNX Runtime names the file "<prefix>_<date>_<time>.json" when
// endProfiling() is called, and this script moves it to OUT. Inputs are
// filled from a fixed-seed generator, so runs are repeatable. Each run uses
// the next batch size of --batches in turn (the models have a dynamic batch
// axis), so the profile shows more than one input shape; --shape gives the
// dimensions after the batch one of the model's only input (float32).
// --meta writes what the profile itself does not say: the ORT version, the
// options, the file name ORT chose (it holds the local date and time) and
// Date.now() just before the session was created, which is close to ORT's
// ts 0 (profiling starts with the session).
'use strict';

const fs = require('fs');
const path = require('path');

function die(msg) {
  process.stderr.write(`run_profile.js: ${msg}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const opt = {
    runs: 6, batches: [1, 4], intra: 2, inter: 1, mode: 'sequential',
    opt: 'all',
  };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    const val = argv[i + 1];
    if (val === undefined) die(`${key} needs a value`);
    i++;
    switch (key) {
      case '--ort': opt.ort = val; break;
      case '--model': opt.model = val; break;
      case '--out': opt.out = val; break;
      case '--meta': opt.meta = val; break;
      case '--shape': opt.shape = val.split(',').map(Number); break;
      case '--runs': opt.runs = Number(val); break;
      case '--batches': opt.batches = val.split(',').map(Number); break;
      case '--intra': opt.intra = Number(val); break;
      case '--inter': opt.inter = Number(val); break;
      case '--mode': opt.mode = val; break;
      case '--opt': opt.opt = val; break;
      default: die(`unknown option ${key}`);
    }
  }
  if (!opt.ort || !opt.model || !opt.out || !opt.shape) {
    die('usage: run_profile.js --ort DIR --model M.onnx --shape D,D,.. ' +
      '--out OUT.json ...');
  }
  const positive = (n) => Number.isInteger(n) && n >= 1;
  if (!positive(opt.runs) || !opt.batches.every(positive) ||
      !opt.shape.every(positive)) {
    die('--runs, --batches and --shape take positive integers');
  }
  return opt;
}

// A small xorshift generator: the same inputs on every machine.
function filler(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return (s / 4294967296) * 2 - 1;
  };
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.resolve(opt.ort, 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    die(`cannot load onnxruntime-node from ${opt.ort}: ${e.message}`);
  }

  const outDir = path.dirname(path.resolve(opt.out));
  const profDir = fs.mkdtempSync(path.join(outDir, '.ort-profile-'));
  const wallMsBeforeCreate = Date.now();
  const session = await ort.InferenceSession.create(opt.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: opt.intra,
    interOpNumThreads: opt.inter,
    executionMode: opt.mode,
    graphOptimizationLevel: opt.opt,
    enableProfiling: true,
    profileFilePrefix: path.join(profDir, 'ort'),
    logSeverityLevel: 3,
  });

  if (session.inputNames.length !== 1) {
    die(`${opt.model} has ${session.inputNames.length} inputs, expected one`);
  }
  const name = session.inputNames[0];
  const rest = opt.shape;
  const next = filler(0x5eed);
  for (let r = 0; r < opt.runs; r++) {
    const dims = [opt.batches[r % opt.batches.length], ...rest];
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; i++) data[i] = next();
    const feeds = { [name]: new ort.Tensor('float32', data, dims) };
    const out = await session.run(feeds);
    const first = out[session.outputNames[0]];
    if (!first || first.dims[0] !== dims[0]) die(`run ${r}: unexpected output`);
  }
  session.endProfiling();
  await session.release();

  const files = fs.readdirSync(profDir).filter((f) => f.endsWith('.json'));
  if (files.length !== 1) {
    die(`expected one profile in ${profDir}, found ${files.length}`);
  }
  fs.renameSync(path.join(profDir, files[0]), opt.out);
  fs.rmdirSync(profDir);
  // A profile without operator events would make every test that reads it
  // vacuous: refuse it here.
  let events;
  try {
    events = JSON.parse(fs.readFileSync(opt.out, 'utf8'));
  } catch (e) {
    die(`${opt.out} is not JSON: ${e.message}`);
  }
  const nodes = Array.isArray(events) ?
    events.filter((e) => e.cat === 'Node').length : 0;
  if (nodes === 0) die(`${opt.out} has no Node events`);
  const ver = require(path.resolve(opt.ort, 'node_modules', 'onnxruntime-node',
    'package.json')).version;
  if (opt.meta) {
    const meta = {
      onnxruntime_node: ver,
      node: process.version,
      model: path.basename(opt.model),
      input: name,
      shape_after_batch: rest,
      runs: opt.runs,
      batches: opt.batches,
      intra_op_threads: opt.intra,
      inter_op_threads: opt.inter,
      execution_mode: opt.mode,
      graph_optimization_level: opt.opt,
      execution_providers: ['cpu'],
      ort_file_name: files[0],
      wall_clock_ms_before_create: wallMsBeforeCreate,
    };
    fs.writeFileSync(opt.meta, JSON.stringify(meta, null, 1) + '\n');
  }
  process.stdout.write(`profile ${opt.out}: ${events.length} events ` +
    `(${nodes} Node), onnxruntime-node ${ver}, ` +
    `${path.basename(opt.model)}, ${opt.runs} runs, batches ${opt.batches}, ` +
    `intra ${opt.intra}, inter ${opt.inter}, ${opt.mode}, opt ${opt.opt}\n`);
}

main().catch((e) => die(e && e.message ? e.message : String(e)));
