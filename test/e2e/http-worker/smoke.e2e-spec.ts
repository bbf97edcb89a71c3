import { backends } from '../../support/backends.js';
import { startHttpWorker, type HttpWorkerUnderTest } from '../../support/worker-under-test.js';

describe.each(backends())('HTTP worker smoke ($name)', (backend) => {
  let worker: HttpWorkerUnderTest;
  beforeAll(async () => {
    worker = await startHttpWorker(backend);
  });
  afterAll(() => worker?.close());

  it('answers /health and /api/ping', async () => {
    const health = await worker.api.get('/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'healthy', pid: process.pid });
    expect((await worker.api.get('/api/ping')).status).toBe(200);
    const ready = await worker.api.get('/ready');
    expect(ready.status).toBe(200);
  });
});
