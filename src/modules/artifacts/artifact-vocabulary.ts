export const ARTIFACT_TYPES = ['desktop_app', 'cli_executable', 'browser_extension', 'mobile_app', 'library'] as const;
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];

/** Older names still sent by existing clients, mapped to the current types. */
export const ARTIFACT_TYPE_ALIASES: Readonly<Record<string, ArtifactType>> = { tauri_app: 'desktop_app' };

/** Every value accepted on the wire: the current types and their aliases. */
export const ACCEPTED_ARTIFACT_TYPES: readonly string[] = [...ARTIFACT_TYPES, ...Object.keys(ARTIFACT_TYPE_ALIASES)];

export const PLATFORMS = ['all', 'windows', 'linux', 'macos', 'android', 'ios'] as const;
export type Platform = (typeof PLATFORMS)[number];

export const ARCHITECTURES = ['all', 'x64', 'x86', 'arm64', 'arm32'] as const;
export type Architecture = (typeof ARCHITECTURES)[number];

export function canonicalArtifactType(value: string): ArtifactType | null {
  if ((ARTIFACT_TYPES as readonly string[]).includes(value)) return value as ArtifactType;
  return ARTIFACT_TYPE_ALIASES[value] ?? null;
}

export function isPlatform(value: string): value is Platform {
  return (PLATFORMS as readonly string[]).includes(value);
}

export function isArchitecture(value: string): value is Architecture {
  return (ARCHITECTURES as readonly string[]).includes(value);
}
