import { lowestFreePort, portRange } from './ports.js';

describe('worker port slots', () => {
  it('lists base … base + slots - 1', () => {
    expect(portRange(8000, 4)).toEqual([8000, 8001, 8002, 8003]);
  });

  it('gives the lowest port no worker holds', () => {
    expect(lowestFreePort(portRange(8000, 4), [8000, 8002])).toBe(8001);
    expect(lowestFreePort(portRange(8000, 4), [8001, 8002, 8003])).toBe(8000);
  });

  it('gives null when every slot is held', () => {
    expect(lowestFreePort(portRange(8000, 2), [8001, 8000])).toBeNull();
  });
});
