import type { PackageDeltaEntity } from './entities/package-delta.entity.js';
import { compressionRatio, diffInfoView } from './diff.views.js';

function delta(patchSize: number, fullSize: number): PackageDeltaEntity {
  return {
    id: 'd1',
    packageId: 'p1',
    fromVersionId: 'v1',
    toVersionId: 'v2',
    fromVersion: '1.0.0',
    toVersion: '1.1.0',
    status: 'ready',
    format: 'tbdelta/1',
    patchSize,
    fullSize,
    changedFiles: 1,
    addedFiles: 0,
    deletedFiles: 0,
    keptFiles: 4,
    exactRebuild: true,
    patchStoragePath: 'deltas/p1/1.0.0-1.1.0-abc.tbdelta',
    patchChecksum: 'c'.repeat(64),
    error: null,
    createdAt: new Date('2026-01-02T03:04:05.000Z'),
    updatedAt: new Date('2026-01-02T03:04:05.000Z'),
  };
}

describe('diffInfoView', () => {
  it('reports the compression ratio as patch size over full size', () => {
    expect(diffInfoView({ name: 'pkg' }, delta(250, 1000), 'http://h').compression_ratio).toBe(0.25);
  });

  it('recommends a delta of exactly 80 % of the full size', () => {
    expect(diffInfoView({ name: 'pkg' }, delta(800, 1000), 'http://h').recommended).toBe(true);
  });

  it('does not recommend a delta larger than 80 % of the full size', () => {
    expect(diffInfoView({ name: 'pkg' }, delta(801, 1000), 'http://h').recommended).toBe(false);
  });

  it('links the download route with the versions URL-encoded', () => {
    const view = diffInfoView({ name: 'pkg' }, { ...delta(1, 2), toVersion: '2.0.0-beta.1' }, 'http://h');
    expect(view.download_url).toBe('http://h/api/v1/packages/pkg/diff/1.0.0/2.0.0-beta.1/download');
  });
});

describe('compressionRatio', () => {
  it('counts an empty full file as no saving', () => {
    expect(compressionRatio(10, 0)).toBe(1);
  });
});
