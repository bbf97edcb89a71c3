/** The registry's closed vocabularies, shared with the modules that validate or document them. */
export const PACKAGE_TYPES = ['mod', 'library', 'artifact', 'theme', 'plugin'] as const;
export type PackageType = (typeof PACKAGE_TYPES)[number];

export const VISIBILITIES = ['public', 'unlisted', 'private'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export const VERIFICATION_STATUSES = ['unverified', 'pending', 'verified', 'rejected', 'suspended'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];
