// `node --import ./test/support/ts-register.mjs src/main.ts …`: runs the TypeScript sources (ts-loader.mjs).
import { register } from 'node:module';

register('./ts-loader.mjs', import.meta.url);
