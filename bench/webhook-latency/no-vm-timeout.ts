// An experiment, never the product: loaded with --import into the benchmark's worker process (and,
// through the inherited execArgv, into the SDK's workflow threads) when BENCH_NO_VM_TIMEOUT=1. It
// drops the `timeout` option of node:vm's runInContext calls, which the Temporal SDK passes on every
// call into workflow code (isolateExecutionTimeout, 5 s: its deadlock detection) and for which Node
// starts and joins a watchdog thread each time (~130 µs of CPU per call measured here, against ~3 µs
// without). It measures what that costs per delivery; the SDK has no option to turn it off.
import vm from 'node:vm';

type RunOptions = vm.RunningScriptOptions | undefined;
const strip = (options: RunOptions | string): RunOptions | string => {
  if (typeof options !== 'object' || options === null || !('timeout' in options)) return options;
  const { timeout: _timeout, ...rest } = options;
  return rest;
};
const runScript = vm.Script.prototype.runInContext;
vm.Script.prototype.runInContext = function (this: vm.Script, context: vm.Context, options?: vm.RunningScriptOptions) {
  return runScript.call(this, context, strip(options) as RunOptions);
};
const runCode = vm.runInContext;
vm.runInContext = (code: string, context: vm.Context, options?: vm.RunningCodeOptions | string) =>
  runCode(code, context, strip(options as RunOptions | string) as vm.RunningCodeOptions | string);
