/** Access levels live with the platform's auth (src/auth); the core keeps this path for its importers. */
export { ACCESS_LEVEL, accessRank, hasAccessLevel } from '../../auth/access-level.js';
