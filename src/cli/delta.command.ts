import { PlatformError } from '../common/errors.js';
import { applyDelta } from '../modules/diff/delta/apply-delta.js';
import { createDelta } from '../modules/diff/delta/create-delta.js';
import { processIo, type CommandIo } from './command-io.js';

const USAGE = ['Usage:', '  tb delta create OLD.zip NEW.zip PATCH', '  tb delta apply OLD.zip PATCH OUT.zip'].join(
  '\n',
);

/** `tb delta create|apply …`: the registry's delta code, run locally. Returns the process exit code. */
export async function runDeltaCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [action, ...paths] = argv;
  if ((action !== 'create' && action !== 'apply') || paths.length !== 3) {
    io.err(USAGE);
    return 2;
  }
  try {
    if (action === 'create') {
      const started = performance.now();
      const summary = await createDelta(paths[0], paths[1], paths[2]);
      const percent = ((summary.patchSize / Math.max(summary.fullSize, 1)) * 100).toFixed(1);
      io.out(
        [
          `${paths[2]}: ${summary.patchSize} bytes, ${percent} % of ${summary.fullSize} (${summary.format})`,
          `files: ${summary.keptFiles} kept, ${summary.changedFiles} changed, ${summary.addedFiles} added, ${summary.deletedFiles} deleted`,
          `exact rebuild: ${summary.exactRebuild ? 'yes' : 'no (contents and tree digest only)'}`,
          `patch sha256: ${summary.patchSha256}`,
          `target sha256: ${summary.targetSha256}`,
          `tree digest: ${summary.treeDigest}`,
          `time: ${((performance.now() - started) / 1000).toFixed(2)} s`,
        ].join('\n'),
      );
    } else {
      const started = performance.now();
      const result = await applyDelta(paths[0], paths[1], paths[2]);
      io.out(
        [
          `${result.outputPath}: ${result.size} bytes, ${result.entryCount} entries, every entry verified`,
          `sha256: ${result.sha256} (${result.byteIdentical ? 'identical to the target file' : 'equivalent archive: same contents and tree digest, different bytes'})`,
          `tree digest: ${result.treeDigest}`,
          `time: ${((performance.now() - started) / 1000).toFixed(2)} s`,
        ].join('\n'),
      );
    }
    return 0;
  } catch (error) {
    if (error instanceof PlatformError) {
      io.err(`tb delta ${action}: ${error.message}`);
      return 1;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES') {
      io.err(`tb delta ${action}: ${(error as Error).message}`);
      return 1;
    }
    throw error;
  }
}
