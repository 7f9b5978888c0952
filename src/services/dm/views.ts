// The views the dm area answers. A DM request's view is declared with the conversations area's
// port to this area (conversations/dm-port.ts), which both read: that area hands requests on
// (`createConversation`'s `dmRequestsSent`) and may not import this one. Its fields are the
// stored ones under the same names, so a row read by queries.ts is one as it stands.
export type { DmRequestView } from '../conversations/index.js';
