/**
 * The wire contract that the client, the coordinator and the simulator all
 * import: asset names, protocol version, message types, default limits, the
 * one errors registry, the retry backoff, and how the commands read their
 * arguments. Plain ESM with no Node-only
 * imports, so the browser bundle takes what it uses.
 */
export { ERRORS, COORDINATOR_ERRORS, CLIENT_ERRORS, CLI_ERRORS, SIM_ERRORS, DEMO_ERRORS, MayghError } from './errors.js'
export { readArgs, flagHelp, commandError } from './cli-args.js'
export { backoffDelay } from './backoff.js'
export { SRI_PATTERN, isSri, sriOf, matches, sha256FromIntegrity } from './sri.js'
export { PROTOCOL_VERSION, PROTOCOL_VERSIONS, RELAY_PROTOCOL_VERSION, MANIFEST_VERSION, REQUEST_TYPES, REPORT_REASONS, USAGE_SOURCES, MAX_USAGE_BYTES, USAGE_ID_PATTERN, VISITOR_KEY_PATTERN, PEER_ID_PATTERN, SHARD_ID_PATTERN, shardOfPeer, newCid, heldUrl, LIMITS } from './messages.js'
export { PIECE_BYTES, PIECED_ABOVE, PIECE_LISTS_DIR, pieceListPath, pieceCount, pieceList, pieceNames, splitPieces, piecesOf } from './pieces.js'
