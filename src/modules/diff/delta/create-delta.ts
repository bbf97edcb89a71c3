import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { deflateRawSync } from 'node:zlib';
import { PlatformError } from '../../../common/errors.js';
import {
  DEFAULT_CONTENT_LEVEL,
  DEFAULT_MAX_PATCH_ENTRY_BYTES,
  DEFAULT_PATCH_LEVEL,
  canDiff,
  compressContent,
  createBinaryPatch,
} from './binary-diff.js';
import {
  DELTA_FORMAT,
  encodeHeader,
  preamble,
  treeDigest,
  type DeltaEntry,
  type DeltaHeader,
  type DeltaSummary,
  type ExactData,
  type LayoutPiece,
} from './delta-format.js';
import { ZipReader, sha256Hex, type ZipEntryInfo } from './zip-entries.js';

export type ExactRebuildPolicy = 'auto' | 'always' | 'never';

export interface CreateDeltaOptions {
  /** Entries larger than this are never binary-diffed (bounds memory and time). Default 64 MiB. */
  maxPatchEntryBytes?: number;
  /** A patch is used only when it is at most this fraction of the zstd-compressed content. Default 0.9. */
  patchThreshold?: number;
  patchLevel?: number;
  contentLevel?: number;
  /**
   * Whether the delta carries what is needed to rebuild the target ZIP byte for byte.
   * auto (default): yes when that adds at most `exactOverheadLimit` of the target size to the delta.
   */
  exactRebuild?: ExactRebuildPolicy;
  /** Fraction of the target file size that exact rebuild may add to the delta under `auto`. Default 0.1. */
  exactOverheadLimit?: number;
  now?: Date;
}

interface SourceEntry {
  info: ZipEntryInfo;
  sha256: string;
  rawSha256: string;
}

/** A chunk of payload staged in one of the temporary files until the final layout is known. */
interface StagedPayload {
  file: 'content' | 'raw';
  offset: number;
  length: number;
}

interface PlannedEntry {
  entry: DeltaEntry;
  info: ZipEntryInfo;
  contentPayload?: StagedPayload;
  /** Set when the target's compressed bytes can only be reproduced by shipping them. */
  rawPayload?: StagedPayload;
  exact?: ExactData;
  classification: 'kept' | 'changed' | 'added';
}

/** Levels worth trying when checking whether Node's zlib reproduces an entry, from the ZIP deflate option bits. */
function deflateLevelCandidates(generalPurposeBitFlag: number): number[] {
  switch ((generalPurposeBitFlag >> 1) & 3) {
    case 1:
      return [9];
    case 2:
    case 3:
      return [1, 2];
    default:
      return [6, 9, 1];
  }
}

/**
 * Builds a TBDELTA1 file that turns the ZIP at `oldZipPath` into the ZIP at `newZipPath`.
 * The output is written to a temporary file beside `outPatchPath` and renamed into place when complete.
 */
export async function createDelta(
  oldZipPath: string,
  newZipPath: string,
  outPatchPath: string,
  options: CreateDeltaOptions = {},
): Promise<DeltaSummary> {
  const maxPatchEntryBytes = options.maxPatchEntryBytes ?? DEFAULT_MAX_PATCH_ENTRY_BYTES;
  const patchThreshold = options.patchThreshold ?? 0.9;
  const patchLevel = options.patchLevel ?? DEFAULT_PATCH_LEVEL;
  const contentLevel = options.contentLevel ?? DEFAULT_CONTENT_LEVEL;
  const policy = options.exactRebuild ?? 'auto';
  const overheadLimit = options.exactOverheadLimit ?? 0.1;

  const tempSuffix = `.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const contentStagePath = `${outPatchPath}.content${tempSuffix}`;
  const rawStagePath = `${outPatchPath}.raw${tempSuffix}`;
  const outputTempPath = `${outPatchPath}${tempSuffix}`;

  const source = await ZipReader.open(oldZipPath, 'Source archive');
  let target: ZipReader | undefined;
  const stages = { content: undefined as FileHandle | undefined, raw: undefined as FileHandle | undefined };
  try {
    target = await ZipReader.open(newZipPath, 'Target archive');
    stages.content = await open(contentStagePath, 'w+');
    stages.raw = await open(rawStagePath, 'w+');
    const stageLengths = { content: 0, raw: 0 };
    const stage = async (file: 'content' | 'raw', bytes: Buffer): Promise<StagedPayload> => {
      const handle = stages[file] as FileHandle;
      const offset = stageLengths[file];
      await handle.write(bytes, 0, bytes.length, offset);
      stageLengths[file] += bytes.length;
      return { file, offset, length: bytes.length };
    };

    const sourceByPath = new Map<string, SourceEntry>();
    const sourceByContent = new Map<string, SourceEntry>();
    for (const info of source.listing.entries) {
      const content = await source.readContent(info);
      const entry: SourceEntry = { info, sha256: sha256Hex(content), rawSha256: sha256Hex(await source.readRaw(info)) };
      sourceByPath.set(info.path, entry);
      if (!sourceByContent.has(entry.sha256)) sourceByContent.set(entry.sha256, entry);
    }

    const planned: PlannedEntry[] = [];
    for (const info of target.listing.entries) {
      const content = await target.readContent(info);
      const raw = await target.readRaw(info);
      const sha256 = sha256Hex(content);
      const base = {
        path: info.path,
        sha256,
        size: content.length,
        compressionMethod: info.compressionMethod,
        modifiedAt: info.modifiedAt.toISOString(),
        unixMode: info.unixMode,
      };
      const samePath = sourceByPath.get(info.path);
      // Counts follow paths (what a user sees change); operations follow content (what travels).
      const classification = samePath ? (samePath.sha256 === sha256 ? 'kept' : 'changed') : 'added';
      const sameContent = samePath?.sha256 === sha256 ? samePath : sourceByContent.get(sha256);
      let plan: PlannedEntry;
      if (sameContent) {
        plan = { entry: { ...base, operation: 'keep', sourcePath: sameContent.info.path }, info, classification };
      } else {
        const compressed = compressContent(content, contentLevel);
        let patch: Buffer | undefined;
        if (samePath && Math.max(samePath.info.size, content.length) <= maxPatchEntryBytes) {
          const oldContent = await source.readContent(samePath.info);
          if (canDiff(oldContent, content, maxPatchEntryBytes)) {
            const candidate = createBinaryPatch(oldContent, content, patchLevel);
            if (candidate.length <= compressed.length * patchThreshold) patch = candidate;
          }
        }
        if (patch && samePath) {
          plan = {
            entry: { ...base, operation: 'patch', sourcePath: samePath.info.path, sourceSha256: samePath.sha256 },
            info,
            contentPayload: await stage('content', patch),
            classification,
          };
        } else {
          plan = {
            entry: { ...base, operation: samePath ? 'replace' : 'add' },
            info,
            contentPayload: await stage('content', compressed),
            classification,
          };
        }
      }

      if (policy !== 'never') {
        const rawSha256 = sha256Hex(raw);
        const exactBase = { rawSha256, compressedSize: raw.length };
        const keptFrom =
          plan.entry.operation === 'keep' ? sourceByPath.get(plan.entry.sourcePath as string) : undefined;
        if (info.compressionMethod === 0 && raw.equals(content)) {
          plan.exact = { ...exactBase, source: 'stored' };
        } else if (
          keptFrom &&
          keptFrom.rawSha256 === rawSha256 &&
          keptFrom.info.compressionMethod === info.compressionMethod
        ) {
          plan.exact = { ...exactBase, source: 'source' };
        } else {
          const level =
            info.compressionMethod === 8 && content.length <= maxPatchEntryBytes
              ? deflateLevelCandidates(info.generalPurposeBitFlag).find((candidate) =>
                  deflateRawSync(content, { level: candidate }).equals(raw),
                )
              : undefined;
          if (level !== undefined) {
            plan.exact = { ...exactBase, source: 'deflate', deflateLevel: level };
          } else {
            plan.exact = { ...exactBase, source: 'payload' };
            plan.rawPayload = await stage('raw', raw);
          }
        }
      }
      planned.push(plan);
    }

    const targetPaths = new Set(target.listing.entries.map((info) => info.path));
    const deleted = source.listing.entries.map((info) => info.path).filter((path) => !targetPaths.has(path));
    const [sourceSha256, targetSha256] = await Promise.all([hashFile(oldZipPath), hashFile(newZipPath)]);

    const layout = policy === 'never' ? null : await planLayout(target, planned);
    let exact = layout !== null;
    if (exact && policy === 'auto') {
      const extraBytes = planned.reduce(
        (sum, plan) => sum + (plan.rawPayload ? plan.rawPayload.length - (plan.contentPayload?.length ?? 0) : 0),
        layout?.skeleton.length ?? 0,
      );
      exact = extraBytes <= target.listing.fileSize * overheadLimit;
    }
    if (policy === 'always' && !exact) {
      throw new PlatformError(
        'BAD_REQUEST',
        'Target archive cannot be described for an exact rebuild (overlapping entry data)',
      );
    }

    // Final payload order: entry payloads in target order, then the skeleton.
    const chunks: StagedPayload[] = [];
    let payloadLength = 0;
    const place = (chunk: StagedPayload) => {
      chunks.push(chunk);
      const offset = payloadLength;
      payloadLength += chunk.length;
      return offset;
    };
    for (const plan of planned) {
      if (exact && plan.rawPayload) {
        const offset = place(plan.rawPayload);
        const operation = plan.entry.operation === 'add' ? 'add' : 'replace';
        plan.entry = { ...plan.entry, operation, sourcePath: undefined, sourceSha256: undefined };
        plan.entry.payload = { offset, length: plan.rawPayload.length, encoding: 'zip-data' };
      } else if (plan.contentPayload) {
        const offset = place(plan.contentPayload);
        plan.entry.payload = {
          offset,
          length: plan.contentPayload.length,
          encoding: plan.entry.operation === 'patch' ? 'zstd-patch' : 'zstd',
        };
      }
      if (exact) plan.entry.exact = plan.exact;
    }
    let skeletonOffset = 0;
    if (exact && layout) {
      skeletonOffset = payloadLength;
      payloadLength += layout.skeleton.length;
    }

    const header: DeltaHeader = {
      format: DELTA_FORMAT,
      createdAt: (options.now ?? new Date()).toISOString(),
      source: {
        sha256: sourceSha256,
        size: source.listing.fileSize,
        treeDigest: treeDigest(
          [...sourceByPath.values()].map((entry) => ({ path: entry.info.path, sha256: entry.sha256 })),
        ),
        entryCount: source.listing.entries.length,
      },
      target: {
        sha256: targetSha256,
        size: target.listing.fileSize,
        treeDigest: treeDigest(planned.map((plan) => plan.entry)),
        entryCount: planned.length,
      },
      entries: planned.map((plan) => stripUndefined(plan.entry)),
      deleted,
      layout:
        exact && layout
          ? {
              pieces: layout.pieces,
              skeleton: {
                offset: skeletonOffset,
                length: layout.skeleton.length,
                encoding: 'zstd',
                size: layout.skeletonSize,
              },
            }
          : null,
    };

    const encodedHeader = encodeHeader(header);
    const output = await open(outputTempPath, 'w');
    const bodyHash = createHash('sha256');
    try {
      const write = async (bytes: Buffer) => {
        bodyHash.update(bytes);
        await output.write(bytes);
      };
      await write(preamble(encodedHeader.length));
      await write(encodedHeader);
      for (const chunk of chunks) {
        await copyRange(stages[chunk.file] as FileHandle, chunk.offset, chunk.length, write);
      }
      if (exact && layout) await write(layout.skeleton);
      const trailer = bodyHash.digest();
      await output.write(trailer);
      await output.sync();
    } finally {
      await output.close();
    }
    const patchSha256 = await hashFile(outputTempPath);
    await rename(outputTempPath, outPatchPath);

    const count = (classification: PlannedEntry['classification']) =>
      planned.filter((plan) => plan.classification === classification).length;
    return {
      format: DELTA_FORMAT,
      patchSize: 12 + encodedHeader.length + payloadLength + 32,
      fullSize: target.listing.fileSize,
      changedFiles: count('changed'),
      addedFiles: count('added'),
      deletedFiles: deleted.length,
      keptFiles: count('kept'),
      patchSha256,
      targetSha256,
      treeDigest: header.target.treeDigest,
      exactRebuild: exact,
    };
  } finally {
    await source.close();
    await target?.close();
    await stages.content?.close();
    await stages.raw?.close();
    await Promise.all([contentStagePath, rawStagePath, outputTempPath].map((path) => rm(path, { force: true })));
  }
}

interface PlannedLayout {
  pieces: LayoutPiece[];
  skeleton: Buffer;
  skeletonSize: number;
}

/**
 * Splits the target file into entry data ranges and the literal bytes around them (local headers,
 * data descriptors, central directory, end records, any prefix or comment). Returns null when entry
 * data ranges overlap, which a plain byte-run description cannot express.
 */
async function planLayout(target: ZipReader, planned: PlannedEntry[]): Promise<PlannedLayout | null> {
  const order = planned.map((plan, index) => ({
    index,
    start: plan.info.dataStart,
    end: plan.info.dataStart + plan.info.compressedSize,
  }));
  order.sort((left, right) => left.start - right.start);
  const pieces: LayoutPiece[] = [];
  const literals: Buffer[] = [];
  let position = 0;
  for (const range of order) {
    if (range.start < position) return null;
    if (range.start > position) {
      literals.push(await target.readRange(position, range.start - position));
      pieces.push({ literal: range.start - position });
    }
    pieces.push({ entry: range.index });
    position = range.end;
  }
  if (position < target.listing.fileSize) {
    literals.push(await target.readRange(position, target.listing.fileSize - position));
    pieces.push({ literal: target.listing.fileSize - position });
  }
  const skeletonBytes = Buffer.concat(literals);
  return { pieces, skeleton: compressContent(skeletonBytes, 19), skeletonSize: skeletonBytes.length };
}

async function copyRange(
  from: FileHandle,
  offset: number,
  length: number,
  write: (bytes: Buffer) => Promise<void>,
): Promise<void> {
  const chunkSize = 1024 * 1024;
  for (let done = 0; done < length;) {
    const buffer = Buffer.alloc(Math.min(chunkSize, length - done));
    const { bytesRead } = await from.read(buffer, 0, buffer.length, offset + done);
    if (bytesRead === 0) throw new Error('staged payload ended early');
    await write(buffer.subarray(0, bytesRead));
    done += bytesRead;
  }
}

export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function stripUndefined(entry: DeltaEntry): DeltaEntry {
  return Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined)) as unknown as DeltaEntry;
}
