import { existsSync } from 'node:fs';
import { AppConfig, ConfigError, loadConfig } from './app-config';

/**
 * Loads the configuration of a command (the service or a CLI): `.env` in the working directory
 * is read first when present (variables already set win). Bad values print one line each, all
 * of them at once, and exit with status 1.
 */
export function configFromEnvironment(command: string): AppConfig {
  if (existsSync('.env')) process.loadEnvFile('.env');
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) console.error(`${command}: configuration error: ${problem}`);
    process.exit(1);
  }
}
