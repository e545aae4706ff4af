import { describe, expect, it } from 'vitest';
import { maskAccountNumber, namesMatch } from '../../shared/money/payout-accounts.ts';

describe('namesMatch (payout account names against the bank record)', () => {
  it('accepts the same person in another order, case or with a middle name missing', () => {
    expect(namesMatch('Ada Obi', 'OBI ADA CHIOMA')).toBe(true);
    expect(namesMatch('obi, ada', 'OBI ADA')).toBe(true);
    expect(namesMatch('Ada Chioma Obi', 'OBI ADA CHIOMA')).toBe(true);
  });
  it('refuses a lone first name, another person, or nothing', () => {
    expect(namesMatch('Ada', 'OBI ADA CHIOMA')).toBe(false);
    expect(namesMatch('Bayo Obi', 'OBI ADA CHIOMA')).toBe(false);
    expect(namesMatch('', 'OBI ADA')).toBe(false);
  });
  it('accepts a one-word name the bank holds as one word', () => {
    expect(namesMatch('Dangote', 'DANGOTE')).toBe(true);
  });
});

describe('maskAccountNumber', () => {
  it('keeps only the last four digits behind asterisks', () => {
    expect(maskAccountNumber('0123456789')).toBe('******6789');
    expect(maskAccountNumber('01234567890123')).toBe('**********0123');
  });
});
