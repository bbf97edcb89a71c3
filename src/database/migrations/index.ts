import { InitialRegistry1763800000000 } from './1763800000000-initial-registry.js';

/** Applied in order by `tb db migrate` and at service start. Later modules append theirs here. */
export const MIGRATIONS = [InitialRegistry1763800000000];
