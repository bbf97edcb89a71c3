import { DataSource } from 'typeorm';
import type { CallerUser } from '../../auth/principal.js';
import type { Caller } from './caller.js';
import { VISIBILITIES, type Visibility } from './entities/package.entity.js';
import { isVisible, whereVisible, type VisibilityPurpose } from './package-visibility.js';

const OWNER = 'publisher-own';
const user = (id: string, isAdmin = false): CallerUser => ({
  id,
  platformUserId: id,
  username: id,
  email: null,
  isAdmin,
});
const CALLERS: Record<string, Caller> = {
  anonymous: { user: null, isAdmin: false, publisherId: null },
  user: { user: user('u1'), isAdmin: false, publisherId: null },
  owner: { user: user('u2'), isAdmin: false, publisherId: OWNER },
  admin: { user: user('u3', true), isAdmin: true, publisherId: null },
};

/** The visibility rules written out independently of the implementation: caller → purpose → visible [own, visibility] pairs. */
const EXPECTED: Record<string, Record<VisibilityPurpose, string[]>> = {
  anonymous: {
    read: ['other:public', 'own:public'],
    list: ['other:public', 'own:public'],
    search: ['other:public', 'own:public'],
  },
  user: {
    read: ['other:public', 'other:unlisted', 'own:public', 'own:unlisted'],
    list: ['other:public', 'own:public'],
    search: ['other:public', 'own:public'],
  },
  owner: {
    read: ['other:public', 'other:unlisted', 'own:public', 'own:unlisted', 'own:private'],
    list: ['other:public', 'own:public', 'own:unlisted', 'own:private'],
    search: ['other:public', 'own:public', 'own:private'],
  },
  admin: {
    read: ['other:public', 'other:unlisted', 'other:private', 'own:public', 'own:unlisted', 'own:private'],
    list: ['other:public', 'own:public'],
    search: ['other:public', 'own:public'],
  },
};

const PURPOSES: VisibilityPurpose[] = ['read', 'list', 'search'];
const ROWS = (['other', 'own'] as const).flatMap((whose) =>
  VISIBILITIES.map((visibility) => ({
    id: `${whose}:${visibility}`,
    visibility,
    publisherId: whose === 'own' ? OWNER : 'publisher-other',
  })),
);

const cases = Object.keys(CALLERS).flatMap((caller) => PURPOSES.map((purpose) => [caller, purpose] as const));

describe('package visibility', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE packages (id varchar PRIMARY KEY, visibility varchar, publisher_id varchar)');
    for (const row of ROWS)
      await dataSource.query('INSERT INTO packages (id, visibility, publisher_id) VALUES (?, ?, ?)', [
        row.id,
        row.visibility,
        row.publisherId,
      ]);
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  it.each(cases)('shows %s for %s what the seed allows (isVisible)', (caller, purpose) => {
    const visible = ROWS.filter((row) => isVisible(CALLERS[caller], row, purpose)).map((row) => row.id);
    expect(visible.sort()).toEqual([...EXPECTED[caller][purpose]].sort());
  });

  it.each(cases)('selects for %s / %s exactly the rows isVisible accepts (whereVisible)', async (caller, purpose) => {
    const query = dataSource.createQueryBuilder().select('p.id', 'id').from('packages', 'p');
    const rows = await whereVisible(query, 'p', CALLERS[caller], purpose).getRawMany<{ id: string }>();
    expect(rows.map((row) => row.id).sort()).toEqual([...EXPECTED[caller][purpose]].sort());
  });

  it('reads by name by default', () => {
    const unlisted = { visibility: 'unlisted' as Visibility, publisherId: 'publisher-other' };
    expect(isVisible(CALLERS.user, unlisted)).toBe(true);
    expect(isVisible(CALLERS.anonymous, unlisted)).toBe(false);
  });
});
