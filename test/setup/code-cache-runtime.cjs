// Jest's runtime (package.json "runtime"), with a V8 code cache for the modules it compiles. Every test file gets a
// fresh module registry, so each one compiled the relay, the MongoDB driver, BullMQ, Bolt and the MCP SDK again (what
// that cost: docs/testing.md). Here a worker keeps, for each module, the code V8 compiled
// for it while the first file that loaded it ran (taken once that file is done, so it holds the functions the file
// called too) and hands it to the next file, where V8 deserializes it instead of parsing and compiling. Modules still
// run afresh in each file's own context: only compiled code is shared, and V8 checks it against the source.
const vm = require('node:vm');
const Runtime = require('jest-runtime').default;

/** By file: the source and the code V8 compiled for it. One worker process, every test file it runs. */
const compiled = new Map();

class CodeCacheRuntime extends Runtime {
  constructor(...args) {
    super(...args);
    const executor = this.executor;
    const compile = executor.compile.bind(executor);
    /** The scripts this test file compiled without a cache: their code is kept once the file is done (teardown). */
    this.uncached = [];
    executor.compile = (source, filename) => {
      const context = executor.environment.getVmContext();
      // Core modules and a disposed environment: Jest's own path, unchanged.
      if (context == null || executor.resolution.isCoreModule(filename)) return compile(source, filename);
      const known = compiled.get(filename);
      const cachedData = known && known.source === source ? known.data : undefined;
      let script;
      try {
        // Jest's module wrapper, on the source's first line so that line numbers stay as they are.
        script = new vm.Script(`(function (${executor.injectedModuleParameters.join(', ')}) {${source}\n})`, {
          filename,
          ...(cachedData ? { cachedData } : {}),
          importModuleDynamically: (specifier, _script, attributes, ...rest) =>
            executor.dynamicImport(specifier, filename, context, attributes, rest[0]),
        });
      } catch {
        return compile(source, filename); // Jest's own error for a syntax error
      }
      if (!cachedData || script.cachedDataRejected) this.uncached.push({ filename, source, script });
      return script.runInContext(context);
    };
  }

  teardown() {
    for (const { filename, source, script } of this.uncached) {
      try {
        compiled.set(filename, { source, data: script.createCachedData() });
      } catch {
        // Not cached: the next file compiles it again.
      }
    }
    this.uncached = [];
    return super.teardown();
  }
}

module.exports = CodeCacheRuntime;
