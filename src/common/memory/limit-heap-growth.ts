// Imported for its effect, early in main.ts: see `limitHeapGrowth`.
import { limitHeapGrowth } from './heap-growth';

limitHeapGrowth();
