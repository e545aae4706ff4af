// The notifications a party reads about one escrow, through the real endpoint.
import { expect } from 'vitest';
import notificationList from '../../supabase/functions/notification-list/handler.ts';
import { get } from './api.ts';
import type { TestUser } from './users.ts';

/** A user's notifications about one escrow (notification-list with its escrow_id), as answered. */
export async function notes(user: TestUser, escrowId: string) {
  const r = await get(notificationList, { token: user.accessToken, query: { escrow_id: escrowId } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
}
