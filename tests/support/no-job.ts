// Setup file of the "suites" project (every suite outside the clock group): a request to jobs-run,
// by whatever route it was built (call(), a raw fetch, supabase-js), fails the test at once. The
// job acts on every row of the shared test database, so only *.clock.test.ts suites may run it
// (tests/README.md). tests/unit/clock-group.test.ts checks the same rule on the source text.
const realFetch = globalThis.fetch;

globalThis.fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const url = input instanceof Request ? input.url : String(input);
  if (/\/jobs-run\/?(?:[?#]|$)/.test(url)) {
    return Promise.reject(
      new Error(`${url}: only suites named *.clock.test.ts may run the job (tests/README.md, "the clock group")`),
    );
  }
  return realFetch(input, init);
};
