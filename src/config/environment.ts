import { existsSync } from 'node:fs';
import { AppConfig, ConfigError, loadConfig } from './app-config';

/** A command's configuration, `.env` included (set variables win); bad values: one line each, exit 1. */
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
