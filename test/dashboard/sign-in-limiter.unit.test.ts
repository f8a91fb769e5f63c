// The client address a sign-in limit counts: an IPv4 address as it is, an IPv6 address as its /64.
import { describe, expect, it } from '@jest/globals';
import { clientNetwork } from '../../dashboard/sign-in-limiter.js';

describe('clientNetwork', () => {
  it('keeps an IPv4 address, and unwraps an IPv4-mapped IPv6 one', () => {
    expect(clientNetwork('203.0.113.7')).toBe('203.0.113.7');
    expect(clientNetwork('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts every address of an IPv6 /64 as one client', () => {
    expect(clientNetwork('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientNetwork('::1')).toBe('0:0:0:0::/64');
  });
});
