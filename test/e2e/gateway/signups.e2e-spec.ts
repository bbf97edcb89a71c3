import { backends } from '../../support/backends.js';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/** Signup requests: no request left pending forever, no answer that tells registered addresses apart, the original clients' fields. */

interface Signup {
  id: string;
  email: string;
  note: string | null;
  requested_tier: string | null;
  status: string;
}

describe.each(backends())('gateway signups ($name)', (backend) => {
  let gateway: GatewayUnderTest;

  beforeAll(async () => {
    gateway = await startGateway(backend);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  const signups = async (status?: string) =>
    (await gateway.call<{ signups: Signup[] }>('GET', `/admin/api/signups${status ? `?status=${status}` : ''}`)).body
      .signups;

  it('answers a signup for a registered address as for a new one, and keeps no request for it', async () => {
    expect((await gateway.call('POST', '/admin/api/users', { email: 'known@example.com' })).status).toBe(201);
    const known = await gateway.call<Signup>('POST', '/api/signup', { email: 'known@example.com' }, '');
    const fresh = await gateway.call<Signup>('POST', '/api/signup', { email: 'fresh@example.com' }, '');
    expect(known.status).toBe(fresh.status);
    expect(Object.keys(known.body).sort()).toEqual(Object.keys(fresh.body).sort());
    expect(known.body).toMatchObject({ status: 'pending', email: 'known@example.com' });
    expect((await signups()).map((signup) => signup.email)).not.toContain('known@example.com');
  });

  it('closes a request whose address was registered after it was made, at approval', async () => {
    const requested = await gateway.call<Signup>('POST', '/api/signup', { email: 'late@example.com' }, '');
    expect(requested.status).toBe(201);
    expect((await gateway.call('POST', '/admin/api/users', { email: 'late@example.com' })).status).toBe(201);
    const approval = await gateway.call<{ error: { message: string } }>(
      'POST',
      `/admin/api/signups/${requested.body.id}/approve`,
      {},
    );
    expect(approval.status).toBe(409);
    expect(approval.body.error.message).toContain('already registered');
    expect((await signups('pending')).map((signup) => signup.id)).not.toContain(requested.body.id);
    expect((await signups()).find((signup) => signup.id === requested.body.id)?.status).toBe('rejected');
  });

  it("accepts the original clients' {email, tier, message}: the message as the note, the tier as a request", async () => {
    const requested = await gateway.call<Signup>(
      'POST',
      '/api/signup',
      { email: 'orig@example.com', tier: 'sub', message: 'for the lab' },
      '',
    );
    expect(requested.status).toBe(201);
    expect(requested.body).toMatchObject({ note: 'for the lab', requested_tier: 'sub', status: 'pending' });
    const listed = (await signups('pending')).find((signup) => signup.id === requested.body.id);
    expect(listed).toMatchObject({ note: 'for the lab', requested_tier: 'sub' });
    const approved = await gateway.call<{ user: { tier: string } }>(
      'POST',
      `/admin/api/signups/${requested.body.id}/approve`,
      { tier: 'sub' },
    );
    expect(approved.body.user.tier).toBe('sub');
  });

  it('refuses a requested tier that is not payg or sub with 422 naming it', async () => {
    const refused = await gateway.call<{ error: { param: string } }>(
      'POST',
      '/api/signup',
      { email: 'climber@example.com', tier: 'admin' },
      '',
    );
    expect(refused.status).toBe(422);
    expect(refused.body.error.param).toBe('tier');
  });
});
