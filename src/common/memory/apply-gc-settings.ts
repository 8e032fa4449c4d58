// Imported for its effect, early in main.ts: see `applyGcSettings`.
import { applyGcSettings } from './gc-settings';

applyGcSettings();
