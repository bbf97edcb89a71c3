// Lets a forked test child run the TypeScript sources directly: `node --import ./register.mjs entry.ts`.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
