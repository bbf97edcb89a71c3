/** Public API of mods: the manifest, packing, safe extraction, the lock file, the registry client and the loader. */
export {
  MOD_MANIFEST_FILE,
  parseModManifest,
  relativePathProblem,
  supportsHostVersion,
  type ModManifest,
} from './mod-manifest.js';
export { packModDirectory, type PackedMod } from './mod-packer.js';
export { extractArchiveSafely, type ExtractionSummary } from './safe-extractor.js';
export { LOCK_FILE_NAME, ModsLockFile, type LockedMod } from './mods-lock-file.js';
export {
  ModsClient,
  type InstallOutcome,
  type InstallReport,
  type InstalledMod,
  type ModsClientOptions,
  type PublishReport,
  type ResolvedEntry,
  type UpdateReport,
} from './mods-client.js';
export {
  applyStaticDescriptor,
  loadInstalledMods,
  modClassesOf,
  type FailedMod,
  type LoadModsOptions,
  type LoadedMod,
  type ModContext,
  type ModLoadReport,
  type StaticModDescriptor,
} from './mod-loader.js';
export { MODS_OPTIONS, ModsLoaderService, type ModsModuleOptions } from './mods-loader.service.js';
export { ModsModule } from './mods.module.js';
