// Reads the process environment the same way under Deno (functions, local server) and Node (vitest).
type DenoEnv = { env: { toObject(): Record<string, string> } };
type NodeProcess = { env: Record<string, string | undefined> };

export function readEnv(): Record<string, string | undefined> {
  const deno = (globalThis as { Deno?: DenoEnv }).Deno;
  if (deno) return deno.env.toObject();
  const proc = (globalThis as { process?: NodeProcess }).process;
  return proc ? proc.env : {};
}
