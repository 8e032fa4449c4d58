import { apiKeyCli } from '../../src/cli/apikey';
import { loadConfig } from '../../src/config/app-config';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The key CLI in this process: `apiKeyCli`, which its entry point runs, on the configuration
 * `env` gives (as the entry point reads its environment), its lines collected as the process
 * would print them. `apikeyProcess` (test/support/process.ts) runs the entry point itself.
 */
export async function apikey(env: Record<string, string>, ...args: string[]): Promise<CommandResult> {
  let stdout = '';
  let stderr = '';
  const code = await apiKeyCli(args, loadConfig(env), {
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
  });
  return { code, stdout, stderr };
}
