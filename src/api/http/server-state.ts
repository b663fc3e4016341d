/**
 * The server's own state, shared by server.ts, the lanes and the system routes: set when shutdown
 * begins, so `/ready` turns away new traffic at once and answers in flight close their connection.
 */
export interface ServerState {
  draining: boolean;
}
