import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../shared/core/endpoint.ts';

const req = (xff?: string) => new Request('http://x/f', { headers: xff ? { 'x-forwarded-for': xff } : {} });

describe('clientAddress (per-address rate limits)', () => {
  it('takes the entry our own proxy appended, not one the client wrote', () => {
    // the client sent "1.2.3.4" itself; the platform edge appended the real address
    expect(clientAddress(req('1.2.3.4, 203.0.113.9'), 1)).toBe('203.0.113.9');
    expect(clientAddress(req('1.2.3.4, 203.0.113.9, 10.0.0.2'), 2)).toBe('203.0.113.9');
  });
  it('uses the only entry there is, and says unknown without the header', () => {
    expect(clientAddress(req('203.0.113.9'), 1)).toBe('203.0.113.9');
    expect(clientAddress(req('203.0.113.9'), 3)).toBe('203.0.113.9');
    expect(clientAddress(req(), 1)).toBe('unknown');
  });
});
