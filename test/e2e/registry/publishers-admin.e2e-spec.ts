import type { ApiClient } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';
import { ADMIN, createPackage, publisherFactory, uploadVersion } from '../../support/registry-fixtures.js';
import { eventually } from '../../support/eventually.js';

const PREFIXES = ['/api/v1/packages/admin', '/api/v1/publishers/admin'] as const;
const ACTIONS = ['verify', 'reject', 'revoke', 'suspend', 'unsuspend'] as const;
const STATUSES = ['unverified', 'pending', 'verified', 'rejected', 'suspended'] as const;
type Status = (typeof STATUSES)[number];

/** The state machine, written out independently of the implementation's table. */
const ALLOWED: Record<(typeof ACTIONS)[number], Partial<Record<Status, Status>>> = {
  verify: { pending: 'verified', unverified: 'verified', rejected: 'verified' },
  reject: { pending: 'rejected' },
  revoke: { verified: 'unverified' },
  suspend: { unverified: 'suspended', pending: 'suspended', verified: 'suspended', rejected: 'suspended' },
  unsuspend: { suspended: 'unverified' },
};

describe.each(backends())('publishers and administration on $name', (backend) => {
  let registry: RegistryUnderTest;
  let admin: ApiClient;

  beforeAll(async () => {
    registry = await startRegistry(backend);
    admin = registry.as(ADMIN);
  });

  afterAll(async () => {
    await registry?.close();
  });

  async function publisherId(name: string): Promise<string> {
    const response = await registry.api.get(`/api/v1/publishers/${name}`);
    if (response.status !== 200) throw new Error(`publisher ${name}: ${response.status}`);
    return response.body.id;
  }

  async function statusOf(name: string): Promise<Status> {
    return (await registry.api.get(`/api/v1/publishers/${name}`)).body.verification_status;
  }

  /** A fresh publisher brought to `status` through the public API. */
  async function publisherIn(status: Status) {
    const publisher = await publisherFactory(registry);
    const id = await publisherId(publisher.publisherName);
    const act = async (action: string) => {
      const response = await admin.post(`/api/v1/packages/admin/${id}/${action}`, { notes: 'setup' });
      if (response.status !== 200) throw new Error(`${action}: ${response.status} ${JSON.stringify(response.body)}`);
    };
    const submit = async () => {
      const response = await publisher.client.post('/api/v1/publishers/verify', {
        method: 'github',
        data: { username: 'octocat' },
      });
      if (response.status !== 202) throw new Error(`submit: ${response.status} ${JSON.stringify(response.body)}`);
    };
    if (status === 'pending') await submit();
    if (status === 'verified') await act('verify');
    if (status === 'rejected') {
      await submit();
      await act('reject');
    }
    if (status === 'suspended') await act('suspend');
    expect(await statusOf(publisher.publisherName)).toBe(status);
    return { ...publisher, id };
  }

  describe('publisher list and detail', () => {
    it('lists publishers with total, page and per_page', async () => {
      await publisherFactory(registry);
      await publisherFactory(registry);
      const response = await registry.api.get('/api/v1/publishers?page=1&per_page=1');
      expect(response.status).toBe(200);
      expect(response.body.publishers).toHaveLength(1);
      expect(response.body).toMatchObject({ page: 1, per_page: 1 });
      expect(response.body.total).toBeGreaterThanOrEqual(2);
      expect(response.body.publishers[0]).toEqual(
        expect.objectContaining({
          id: expect.any(String),
          name: expect.any(String),
          verification_status: expect.any(String),
          package_count: expect.any(Number),
          total_downloads: expect.any(Number),
        }),
      );
    });

    it('filters with verified_only', async () => {
      const verified = await publisherIn('verified');
      await publisherIn('unverified');
      const response = await registry.api.get('/api/v1/publishers?verified_only=true&per_page=100');
      expect(response.status).toBe(200);
      expect(response.body.publishers.map((p: { name: string }) => p.name)).toContain(verified.publisherName);
      expect(
        response.body.publishers.every((p: { verification_status: string }) => p.verification_status === 'verified'),
      ).toBe(true);
    });

    it('filters by status', async () => {
      const suspended = await publisherIn('suspended');
      const response = await registry.api.get('/api/v1/publishers?status=suspended&per_page=100');
      expect(response.body.publishers.map((p: { name: string }) => p.name)).toContain(suspended.publisherName);
      expect(
        response.body.publishers.every((p: { verification_status: string }) => p.verification_status === 'suspended'),
      ).toBe(true);
    });

    it('answers 400 for an unknown status filter', async () => {
      const response = await registry.api.get('/api/v1/publishers?status=golden');
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('BAD_REQUEST');
    });

    it('finds a publisher by name case-insensitively and by id, with the detail fields', async () => {
      const { publisherName } = await publisherFactory(registry, `Case-Pub-${Date.now()}`);
      const byName = await registry.api.get(`/api/v1/publishers/${publisherName.toUpperCase()}`);
      expect(byName.status).toBe(200);
      expect(byName.body).toMatchObject({
        name: publisherName,
        verification_status: 'unverified',
        package_count: 0,
        total_downloads: 0,
        homepage: null,
      });
      expect(byName.body.created_at).toMatch(/Z$/);
      expect(byName.body.display_name).toEqual(expect.any(String));
      const byId = await registry.api.get(`/api/v1/publishers/${byName.body.id}`);
      expect(byId.body.name).toBe(publisherName);
    });

    it('keeps the e-mail from anonymous callers', async () => {
      const client = registry.as({ id: `mail-${Date.now()}`, username: 'mailer' });
      const publisherName = `mail-pub-${Date.now()}`;
      expect(
        (await client.post('/api/v1/auth/register-publisher', { name: publisherName, email: 'team@example.com' }))
          .status,
      ).toBe(201);
      const anonymous = await registry.api.get(`/api/v1/publishers/${publisherName}`);
      expect(anonymous.body).not.toHaveProperty('email');
      expect((await client.get(`/api/v1/publishers/${publisherName}`)).body.email).toBe('team@example.com');
      expect((await registry.as(ADMIN).get(`/api/v1/publishers/${publisherName}`)).body.email).toBe('team@example.com');
    });

    it('answers 404 for an unknown publisher', async () => {
      const response = await registry.api.get('/api/v1/publishers/nobody-here');
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('NOT_FOUND');
    });

    it('counts only the packages the caller may see, and right after a delete', async () => {
      const { client, publisherName } = await publisherFactory(registry);
      await createPackage(client, `Seen-${publisherName}`);
      await createPackage(client, `Hidden-${publisherName}`, { visibility: 'private' });
      expect((await uploadVersion(client, `Seen-${publisherName}`, '1.0.0')).status).toBe(201);
      const ticket = await registry.api.get(`/api/v1/packages/Seen-${publisherName}/versions/1.0.0/download`);
      expect((await registry.api.get(ticket.body.url)).status).toBe(200);

      const counted = await eventually(
        () => registry.api.get(`/api/v1/publishers/${publisherName}`),
        (r) => r.body.total_downloads === 1,
      );
      expect(counted.body).toMatchObject({ package_count: 1, total_downloads: 1 });
      expect((await client.get(`/api/v1/publishers/${publisherName}`)).body).toMatchObject({
        package_count: 2,
        total_downloads: 1,
      });

      expect((await admin.delete(`/api/v1/packages/Seen-${publisherName}`)).status).toBe(204);
      expect((await registry.api.get(`/api/v1/publishers/${publisherName}`)).body).toMatchObject({
        package_count: 0,
        total_downloads: 0,
      });
      expect((await client.get(`/api/v1/publishers/${publisherName}`)).body).toMatchObject({
        package_count: 1,
        total_downloads: 0,
      });
    });
  });

  describe('verification requests', () => {
    it('accepts a request with 202 pending and a request id', async () => {
      const { client, publisherName } = await publisherFactory(registry);
      const response = await client.post('/api/v1/publishers/verify', {
        method: 'github',
        data: { username: 'octocat' },
      });
      expect(response.status).toBe(202);
      expect(response.body).toMatchObject({ status: 'pending', request_id: expect.any(String) });
      expect(await statusOf(publisherName)).toBe('pending');
    });

    it('stores the request with its method, data and later its review', async () => {
      const { client, publisherName, id } = await publisherIn('unverified');
      const submitted = await client.post('/api/v1/publishers/verify', {
        method: 'domain',
        data: { domain: 'example.com' },
      });
      await admin.post(`/api/v1/publishers/admin/${id}/reject`, { notes: 'no TXT record' });
      const detail = await admin.get(`/api/v1/publishers/${publisherName}`);
      expect(detail.body.verification_requests).toHaveLength(1);
      expect(detail.body.verification_requests[0]).toMatchObject({
        id: submitted.body.request_id,
        method: 'domain',
        data: { domain: 'example.com' },
        reviewer: ADMIN.username,
        decision: 'rejected',
        notes: 'no TXT record',
      });
      expect(detail.body.verification_requests[0].submitted_at).toMatch(/Z$/);
      expect(detail.body.verification_requests[0].reviewed_at).toMatch(/Z$/);
    });

    it('refuses a second request while one is pending with 409', async () => {
      const { client } = await publisherIn('pending');
      const response = await client.post('/api/v1/publishers/verify', {
        method: 'email',
        data: { email: 'a@example.com' },
      });
      expect(response.status).toBe(409);
      expect(response.body.message).toContain('pending');
    });

    it('refuses a request from a verified publisher with 409 and keeps it verified', async () => {
      const { client, publisherName } = await publisherIn('verified');
      const response = await client.post('/api/v1/publishers/verify', { method: 'manual', data: {} });
      expect(response.status).toBe(409);
      expect(response.body.message).toContain('verified');
      expect(await statusOf(publisherName)).toBe('verified');
    });

    it('accepts a new request after a rejection', async () => {
      const { client, publisherName } = await publisherIn('rejected');
      const response = await client.post('/api/v1/publishers/verify', {
        method: 'github',
        data: { username: 'again' },
      });
      expect(response.status).toBe(202);
      expect(await statusOf(publisherName)).toBe('pending');
    });

    it('refuses a request from a suspended publisher with 409', async () => {
      const { client } = await publisherIn('suspended');
      const response = await client.post('/api/v1/publishers/verify', { method: 'github', data: { username: 'x' } });
      expect(response.status).toBe(409);
      expect(response.body.message).toContain('suspended');
    });

    it('rejects an unknown method with 422', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.post('/api/v1/publishers/verify', { method: 'carrier-pigeon', data: {} });
      expect(response.status).toBe(422);
      expect(response.body.errors[0].field).toBe('method');
    });

    it('rejects a github request without a username with 422', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.post('/api/v1/publishers/verify', { method: 'github', data: {} });
      expect(response.status).toBe(422);
      expect(response.body.errors[0].field).toBe('data.username');
    });

    it('rejects data that is not an object with 422', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.post('/api/v1/publishers/verify', { method: 'manual', data: 'please' });
      expect(response.status).toBe(422);
    });

    it('refuses a user without a publisher with 403', async () => {
      const response = await registry
        .as({ id: 'no-publisher-user', username: 'nopub' })
        .post('/api/v1/publishers/verify', { method: 'manual', data: {} });
      expect(response.status).toBe(403);
    });

    it('requires a token (401)', async () => {
      const response = await registry.api.post('/api/v1/publishers/verify', { method: 'manual', data: {} });
      expect(response.status).toBe(401);
    });
  });

  describe('admin transitions', () => {
    const cases = PREFIXES.flatMap((prefix) =>
      ACTIONS.flatMap((action) =>
        STATUSES.map((from) => ({ prefix, action, from, to: ALLOWED[action][from] ?? null })),
      ),
    );

    it.each(cases.filter((c) => c.to))('$prefix: $action moves $from to $to', async ({ prefix, action, from, to }) => {
      const { id, publisherName } = await publisherIn(from);
      const response = await admin.post(`${prefix}/${id}/${action}`, { notes: `${action} by test` });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        status: 'success',
        publisher_id: id,
        verification_status: to,
        notes: `${action} by test`,
      });
      expect(await statusOf(publisherName)).toBe(to);
    });

    it.each(cases.filter((c) => !c.to))(
      '$prefix: $action from $from is refused with 409 naming the status',
      async ({ prefix, action, from }) => {
        const { id, publisherName } = await publisherIn(from);
        const response = await admin.post(`${prefix}/${id}/${action}`, { notes: 'nope' });
        expect(response.status).toBe(409);
        expect(response.body.code).toBe('CONFLICT');
        expect(response.body.message).toContain(`"${from}"`);
        expect(await statusOf(publisherName)).toBe(from);
      },
    );

    it.each(PREFIXES.flatMap((prefix) => ACTIONS.map((action) => ({ prefix, action }))))(
      '$prefix: $action is refused to a non-admin with 403',
      async ({ prefix, action }) => {
        const { client, id, publisherName } = await publisherIn('pending');
        const response = await client.post(`${prefix}/${id}/${action}`, {});
        expect(response.status).toBe(403);
        expect(response.body.code).toBe('FORBIDDEN');
        expect(await statusOf(publisherName)).toBe('pending');
      },
    );

    it.each(PREFIXES.flatMap((prefix) => ACTIONS.map((action) => ({ prefix, action }))))(
      '$prefix: $action of an unknown publisher is 404',
      async ({ prefix, action }) => {
        const response = await admin.post(`${prefix}/00000000-0000-0000-0000-000000000000/${action}`, {});
        expect(response.status).toBe(404);
        expect(response.body.code).toBe('NOT_FOUND');
      },
    );

    it.each(PREFIXES)('%s: requires a token (401)', async (prefix) => {
      const response = await registry.api.post(`${prefix}/anything/verify`, {});
      expect(response.status).toBe(401);
    });

    it('accepts an action without notes and answers notes null', async () => {
      const { id } = await publisherIn('unverified');
      const response = await admin.post(`/api/v1/packages/admin/${id}/verify`);
      expect(response.status).toBe(200);
      expect(response.body.notes).toBeNull();
    });

    it('closes the pending request when the publisher is verified', async () => {
      const { id } = await publisherIn('pending');
      await admin.post(`/api/v1/packages/admin/${id}/verify`, { notes: 'ok' });
      const pending = await admin.get('/api/v1/packages/admin/pending?per_page=100');
      expect(pending.body.publishers.map((p: { publisher_id: string }) => p.publisher_id)).not.toContain(id);
    });
  });

  describe('pending list', () => {
    it.each(PREFIXES)('%s/pending lists open requests oldest first with method and data', async (prefix) => {
      const first = await publisherFactory(registry);
      const second = await publisherFactory(registry);
      await second.client.post('/api/v1/publishers/verify', { method: 'domain', data: { domain: 'second.example' } });
      await first.client.post('/api/v1/publishers/verify', { method: 'github', data: { username: 'first' } });
      const response = await admin.get(`${prefix}/pending?per_page=100`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ page: 1, per_page: 100 });
      const mine = response.body.publishers.filter((p: { name: string }) =>
        [first.publisherName, second.publisherName].includes(p.name),
      );
      expect(mine).toEqual([
        expect.objectContaining({
          name: second.publisherName,
          verification_status: 'pending',
          method: 'domain',
          data: { domain: 'second.example' },
          request_id: expect.any(String),
        }),
        expect.objectContaining({ name: first.publisherName, method: 'github', data: { username: 'first' } }),
      ]);
      const times = response.body.publishers.map((p: { submitted_at: string }) => p.submitted_at);
      expect([...times].sort()).toEqual(times);
    });

    it("carries each publisher's fields with id = the publisher id, as the original client reads them", async () => {
      const { client, publisherName, id } = await publisherIn('pending');
      await createPackage(client, `Pend-${publisherName}`);
      await createPackage(client, `PendHidden-${publisherName}`, { visibility: 'private' });
      expect((await uploadVersion(client, `Pend-${publisherName}`, '1.0.0')).status).toBe(201);
      const ticket = await registry.api.get(`/api/v1/packages/Pend-${publisherName}/versions/1.0.0/download`);
      expect((await registry.api.get(ticket.body.url)).status).toBe(200);
      await eventually(
        () => admin.get(`/api/v1/publishers/${publisherName}`),
        (r) => r.body.total_downloads === 1,
      );

      const response = await admin.get('/api/v1/packages/admin/pending?per_page=100');
      expect(response.status).toBe(200);
      const item = response.body.publishers.find((p: { name: string }) => p.name === publisherName);
      const detail = (await admin.get(`/api/v1/publishers/${publisherName}`)).body;
      expect(item).toEqual(
        expect.objectContaining({
          id,
          name: publisherName,
          display_name: detail.display_name,
          verification_status: 'pending',
          package_count: 2,
          total_downloads: 1,
          publisher_id: id,
          verification_request_id: detail.verification_requests[0].id,
          method: 'github',
          data: { username: 'octocat' },
          submitted_at: detail.verification_requests[0].submitted_at,
        }),
      );
      expect(item.verification_request_id).not.toBe(id);
      expect(item.request_id).toBe(item.verification_request_id);
    });

    it('lets an admin verify a publisher by the id read from the pending list', async () => {
      const { publisherName } = await publisherIn('pending');
      const pending = await admin.get('/api/v1/packages/admin/pending?per_page=100');
      const item = pending.body.publishers.find((p: { name: string }) => p.name === publisherName);
      const response = await admin.post(`/api/v1/packages/admin/${item.id}/verify`, {
        notes: 'read from the pending list',
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ publisher_id: item.id, verification_status: 'verified' });
      expect(await statusOf(publisherName)).toBe('verified');
    });

    it('pages the pending list', async () => {
      await publisherIn('pending');
      await publisherIn('pending');
      const all = await admin.get('/api/v1/publishers/admin/pending?per_page=100');
      const page = await admin.get('/api/v1/publishers/admin/pending?page=2&per_page=1');
      expect(page.body.publishers).toHaveLength(1);
      expect(page.body.total).toBe(all.body.total);
      expect(page.body.publishers[0].request_id).toBe(all.body.publishers[1].request_id);
    });

    it.each(PREFIXES)('%s/pending is refused to a non-admin with 403', async (prefix) => {
      const { client } = await publisherFactory(registry);
      const response = await client.get(`${prefix}/pending`);
      expect(response.status).toBe(403);
    });
  });

  describe('suspension', () => {
    it('stops a suspended publisher from creating packages (403)', async () => {
      const { client, publisherName } = await publisherIn('suspended');
      const response = await client.post('/api/v1/packages', { name: `Susp-${publisherName}` });
      expect(response.status).toBe(403);
      expect(response.body.message).toContain('suspended');
      expect((await registry.api.get(`/api/v1/packages/Susp-${publisherName}`)).status).toBe(404);
    });

    it('stops a suspended publisher from uploading versions (403)', async () => {
      const { client, id, publisherName } = await publisherIn('unverified');
      await createPackage(client, `Upl-${publisherName}`);
      await admin.post(`/api/v1/packages/admin/${id}/suspend`, { notes: 'abuse' });
      const response = await uploadVersion(client, `Upl-${publisherName}`, '1.0.0');
      expect(response.status).toBe(403);
      expect((await registry.api.get(`/api/v1/packages/Upl-${publisherName}`)).body.versions).toEqual([]);
    });

    it('lets the publisher create packages again after unsuspend', async () => {
      const { client, id, publisherName } = await publisherIn('suspended');
      await admin.post(`/api/v1/publishers/admin/${id}/unsuspend`, {});
      const response = await client.post('/api/v1/packages', { name: `Back-${publisherName}` });
      expect(response.status).toBe(201);
    });
  });

  describe('audit log', () => {
    it('records admin actions with actor, action, target, notes and time, newest first', async () => {
      const { id, publisherName } = await publisherIn('pending');
      await admin.post(`/api/v1/packages/admin/${id}/verify`, { notes: 'looks right' });
      await admin.post(`/api/v1/publishers/admin/${id}/suspend`, { notes: 'spam' });
      const response = await admin.get(`/api/v1/admin/audit?target=${publisherName}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ total: 2, page: 1, per_page: 20 });
      expect(response.body.entries).toEqual([
        expect.objectContaining({
          actor: ADMIN.username,
          action: 'publisher.suspend',
          target_type: 'publisher',
          target: publisherName,
          notes: 'spam',
        }),
        expect.objectContaining({
          actor: ADMIN.username,
          action: 'publisher.verify',
          target_type: 'publisher',
          target: publisherName,
          notes: 'looks right',
        }),
      ]);
      expect(response.body.entries[0]).toEqual(
        expect.objectContaining({ id: expect.any(String), created_at: expect.stringMatching(/Z$/) }),
      );
    });

    it('filters by target id as well as by name', async () => {
      const { id, publisherName } = await publisherIn('unverified');
      await admin.post(`/api/v1/packages/admin/${id}/suspend`, { notes: 'x' });
      const byId = await admin.get(`/api/v1/admin/audit?target=${id}`);
      const byName = await admin.get(`/api/v1/admin/audit?target=${publisherName.toUpperCase()}`);
      expect(byId.body.total).toBe(1);
      expect(byName.body.entries).toEqual(byId.body.entries);
    });

    it('does not record refused actions', async () => {
      const { id } = await publisherIn('unverified');
      expect((await admin.post(`/api/v1/packages/admin/${id}/revoke`, { notes: 'no' })).status).toBe(409);
      expect((await admin.get(`/api/v1/admin/audit?target=${id}`)).body.total).toBe(0);
    });

    it('records a package delete with its actor', async () => {
      const { client, publisherName } = await publisherFactory(registry);
      const name = `Doomed-${publisherName}`;
      await createPackage(client, name);
      expect((await admin.delete(`/api/v1/packages/${name}`)).status).toBe(204);
      const response = await admin.get(`/api/v1/admin/audit?target=${name}`);
      expect(response.body.entries).toEqual([
        expect.objectContaining({
          actor: ADMIN.username,
          action: 'package.delete',
          target_type: 'package',
          target: name,
        }),
      ]);
    });

    it('pages the log', async () => {
      const { id } = await publisherIn('unverified');
      await admin.post(`/api/v1/packages/admin/${id}/verify`, {});
      await admin.post(`/api/v1/packages/admin/${id}/revoke`, {});
      await admin.post(`/api/v1/packages/admin/${id}/suspend`, {});
      const page = await admin.get(`/api/v1/admin/audit?target=${id}&page=2&per_page=2`);
      expect(page.body).toMatchObject({ total: 3, page: 2, per_page: 2 });
      expect(page.body.entries.map((e: { action: string }) => e.action)).toEqual(['publisher.verify']);
    });

    it('is refused to a non-admin with 403', async () => {
      const { client } = await publisherFactory(registry);
      const response = await client.get('/api/v1/admin/audit');
      expect(response.status).toBe(403);
    });
  });
});

describe.each(backends())('REGISTRY_REQUIRE_VERIFIED_PUBLISHER on $name', (backend) => {
  let registry: RegistryUnderTest;

  beforeAll(async () => {
    registry = await startRegistry(backend, { REGISTRY_REQUIRE_VERIFIED_PUBLISHER: 'true' });
  });

  afterAll(async () => {
    await registry?.close();
  });

  it('refuses a public package from an unverified publisher with 403 saying why', async () => {
    const { client } = await publisherFactory(registry);
    const response = await client.post('/api/v1/packages', { name: 'NotYet' });
    expect(response.status).toBe(403);
    expect(response.body.message).toMatch(/verified publisher/);
  });

  it('still allows a private package from an unverified publisher', async () => {
    const { client } = await publisherFactory(registry);
    const response = await client.post('/api/v1/packages', { name: 'Quiet', visibility: 'private' });
    expect(response.status).toBe(201);
  });

  it('allows public packages once an admin verifies the publisher', async () => {
    const { client, publisherName } = await publisherFactory(registry);
    const id = (await registry.api.get(`/api/v1/publishers/${publisherName}`)).body.id;
    expect((await registry.as(ADMIN).post(`/api/v1/packages/admin/${id}/verify`, { notes: 'ok' })).status).toBe(200);
    const response = await client.post('/api/v1/packages', { name: 'NowPublic' });
    expect(response.status).toBe(201);
  });

  it('refuses an artifact (always public) from an unverified publisher with 403', async () => {
    const { client } = await publisherFactory(registry);
    const response = await client.post('/api/v1/artifacts', {
      name: 'app-unverified',
      artifact_type: 'cli_executable',
    });
    expect(response.status).toBe(403);
    expect(response.body.message).toMatch(/verified publisher/);
  });
});
