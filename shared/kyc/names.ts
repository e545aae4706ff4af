// Whether the names an identity provider returned for a NIN or BVN are the account holder's
// (docs/kyc.md#identity-numbers-bound-to-their-holder). Registries write names their own way: in
// capitals, surname first, with middle names, and often without the tone marks and underdots of
// Yoruba or Igbo spellings. So names are compared as sets of words, each word without case or
// accents (Unicode NFD, combining marks removed): "Chidi Okafor" is "OKAFOR Chidi Emeka", and
// "Adébáyọ̀ Ògúnlesí" is "ADEBAYO OGUNLESI". "Chidi Okafor" is not "Emeka Okafor".

/** The words of a name, compared without case or accents: "Adébáyọ̀ O'Neil" -> ["adebayo", "o", "neil"]. */
export function nameWords(name: string): string[] {
  return name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
}

/** The profile's names, as the account holder gave them. */
export interface HolderNames {
  first: string;
  last: string;
}

/** The names the provider found for the number (any may be missing; middleName may hold several words). */
export interface ReturnedNames {
  firstName?: string | null;
  middleName?: string | null;
  lastName?: string | null;
}

/**
 * True when the returned names are the holder's, in any order and case, with or without accents:
 * every word of the profile's names is among the returned ones (the registry may know middle names
 * the profile does not), or the other way round (the profile has a middle name the registry does
 * not) provided the returned names still have a word of the profile's first name and one of its
 * last name. No returned names, or a profile name with no letters, never match.
 */
export function namesMatch(holder: HolderNames, returned: ReturnedNames): boolean {
  const first = new Set(nameWords(holder.first));
  const last = new Set(nameWords(holder.last));
  const mine = new Set([...first, ...last]);
  const theirs = new Set(
    [returned.firstName, returned.middleName, returned.lastName].flatMap((
      n,
    ) => (typeof n === 'string' ? nameWords(n) : [])),
  );
  if (first.size === 0 || last.size === 0 || theirs.size === 0) return false;
  const within = (a: Set<string>, b: Set<string>) => [...a].every((w) => b.has(w));
  if (within(mine, theirs)) return true;
  return within(theirs, mine) && [...first].some((w) => theirs.has(w)) && [...last].some((w) => theirs.has(w));
}
