/**
 * The sessions that took an append from this process lately, by the user and
 * model they belong to: the public server publishes an invocation before its
 * append commits only into one of those (InvocationsService.invoke), so a
 * message without a row (the append refused) stays rare. A refused append
 * forgets its session, and a session closed elsewhere costs one such message
 * at most per process. Only a guess: the append itself checks the session.
 */
export class OpenSessions {
  private readonly owners = new Map<string, string>();

  constructor(private readonly capacity = 10_000) {}

  has(sessionId: string, userId: number, modelId: number): boolean {
    return this.owners.get(sessionId) === ownerKey(userId, modelId);
  }

  remember(sessionId: string, userId: number, modelId: number): void {
    if (this.owners.has(sessionId)) return;
    // Oldest first out: a Map iterates in insertion order.
    if (this.owners.size >= this.capacity) this.owners.delete(this.owners.keys().next().value as string);
    this.owners.set(sessionId, ownerKey(userId, modelId));
  }

  forget(sessionId: string): void {
    this.owners.delete(sessionId);
  }
}

const ownerKey = (userId: number, modelId: number) => `${userId}:${modelId}`;
