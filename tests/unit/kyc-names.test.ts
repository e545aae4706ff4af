// The matcher that decides whether the names an identity provider returned for a NIN or BVN are
// the account holder's (shared/kyc/names.ts): case, accents, order and middle names are tolerated,
// another person's names are not.
import { describe, expect, it } from 'vitest';
import { namesMatch, nameWords } from '../../shared/kyc/names.ts';

const holder = (first: string, last: string) => ({ first, last });
/** A registry's answer written as one string: surname first, then the given names. */
const returned = (last: string, first: string, middle?: string) => ({
  lastName: last,
  firstName: first,
  middleName: middle,
});

describe('namesMatch', () => {
  it('tolerates case, order and a middle name the profile does not have', () => {
    expect(namesMatch(holder('Chidi', 'Okafor'), returned('OKAFOR', 'Chidi', 'Emeka'))).toBe(true);
    expect(namesMatch(holder('Chidi', 'Okafor'), { firstName: 'OKAFOR', lastName: 'CHIDI' })).toBe(true);
    expect(namesMatch(holder('chidi', 'OKAFOR'), { firstName: 'Chidi Emeka Okafor' })).toBe(true);
  });

  it('tolerates accents, tone marks and underdots (NFD, combining marks removed)', () => {
    expect(namesMatch(holder('Adébáyọ̀', 'Ògúnlesí'), returned('OGUNLESI', 'ADEBAYO'))).toBe(true);
    // precomposed letters on one side, decomposed on the other; the accents on the registry's side
    expect(namesMatch(holder('Adébáyọ̀'.normalize('NFC'), 'Ògúnlesí'.normalize('NFD')), returned('OGUNLESI', 'ADEBAYO')))
      .toBe(true);
    expect(namesMatch(holder('Adebayo', 'Ogunlesi'), returned('Ògúnlesí', 'Adébáyọ̀'))).toBe(true);
    expect(namesMatch(holder('Ngozi', 'Eze'), returned('EZE', 'NGOZI', 'ỤCHẸ'))).toBe(true);
  });

  it('tolerates a middle name the profile has and the registry does not', () => {
    expect(namesMatch(holder('Chidi Emeka', 'Okafor'), returned('OKAFOR', 'CHIDI'))).toBe(true);
  });

  it('refuses another person: a different first name, a different surname, or the surname alone', () => {
    expect(namesMatch(holder('Chidi', 'Okafor'), returned('OKAFOR', 'Emeka'))).toBe(false);
    expect(namesMatch(holder('Chidi', 'Okafor'), returned('NWOSU', 'Chidi'))).toBe(false);
    expect(namesMatch(holder('Chidi', 'Okafor'), { lastName: 'OKAFOR' })).toBe(false);
    expect(namesMatch(holder('Chidi Emeka', 'Okafor'), returned('OKAFOR', 'EMEKA', 'IFEANYI'))).toBe(false);
    expect(namesMatch(holder('Ada', 'Obi'), returned('OBI', 'ADAEZE'))).toBe(false);
  });

  it('no names returned never match, nor a profile name without letters', () => {
    expect(namesMatch(holder('Chidi', 'Okafor'), {})).toBe(false);
    expect(namesMatch(holder('Chidi', 'Okafor'), { firstName: null, lastName: '  ' })).toBe(false);
    expect(namesMatch(holder('-', 'Okafor'), returned('OKAFOR', 'Chidi'))).toBe(false);
  });
});

describe('nameWords', () => {
  it('splits on anything not a letter or digit, without case or accents', () => {
    expect(nameWords("  Adébáyọ̀  O'Neil-Ògúnlesí ")).toEqual(['adebayo', 'o', 'neil', 'ogunlesi']);
  });
});
