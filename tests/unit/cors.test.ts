// CORS_ALLOW_ORIGIN as a list (shared/core/http.ts allowedOrigin): the API answers a browser on a
// listed origin (the web app, the operator console) with that origin, and any other with no
// Access-Control-Allow-Origin at all, so its page reads nothing.
import { describe, expect, it } from 'vitest';
import { allowedOrigin } from '../../shared/core/http.ts';

const SETTING = 'https://app.example.ng, https://console.example.ng:8443';

describe('allowedOrigin', () => {
  it('echoes a listed origin, whichever place it has in the list', () => {
    expect(allowedOrigin(SETTING, 'https://app.example.ng')).toBe('https://app.example.ng');
    expect(allowedOrigin(SETTING, 'https://console.example.ng:8443')).toBe('https://console.example.ng:8443');
  });

  it('answers no header to an origin not listed, to a near miss, and to no origin', () => {
    for (
      const origin of [
        'https://evil.example.ng',
        'https://console.example.ng', // the port differs
        'http://app.example.ng', // the scheme differs
        'https://app.example.ng.evil.ng',
        'https://app.example.ng, https://console.example.ng:8443', // the whole setting as an origin
        '',
        null,
      ]
    ) {
      expect(allowedOrigin(SETTING, origin), String(origin)).toBeUndefined();
    }
  });

  it('answers * under the local default, with or without an origin', () => {
    expect(allowedOrigin('*', 'https://anything.example')).toBe('*');
    expect(allowedOrigin(' * ', null)).toBe('*');
  });
});
