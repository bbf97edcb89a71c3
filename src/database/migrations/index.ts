import { InitialRegistry1763800000000 } from './1763800000000-initial-registry.js';
import { PackageSearch1763800000100 } from './1763800000100-package-search.js';
import { PackageDeltas1763800000200 } from './1763800000200-package-deltas.js';
import { AdminArtifacts1763800000300 } from './1763800000300-admin-artifacts.js';
import { SearchScores1763800000400 } from './1763800000400-search-scores.js';
import { BatchCoveringIndex1763800000500 } from './1763800000500-batch-covering-index.js';
import { SearchVocabulary1763800000600 } from './1763800000600-search-vocabulary.js';
import { SearchRankingScale1763800000700 } from './1763800000700-search-ranking-scale.js';
import { ApiKeys1763800000800 } from './1763800000800-api-keys.js';
import { GatewayAccounts1763800000900 } from './1763800000900-gateway-accounts.js';
import { WorkerAuth1763800001200 } from './1763800001200-worker-auth.js';
import { Mcp1763800001400 } from './1763800001400-mcp.js';
import { SearchFulltext1763800001500 } from './1763800001500-search-fulltext.js';
import { SearchRankKeys1763800001600 } from './1763800001600-search-rank-keys.js';
import { SearchWordCounts1763800001700 } from './1763800001700-search-word-counts.js';
import { GatewaySettings1763800001860 } from './1763800001860-gateway-settings.js';
import { DropApiKeys1763800001880 } from './1763800001880-drop-api-keys.js';
import { GatewaySignupTier1763800001890 } from './1763800001890-gateway-signup-tier.js';
import { UserSettings1763800001900 } from './1763800001900-user-settings.js';
import { GatewayLedger1763800001920 } from './1763800001920-gateway-ledger.js';
import { Passkeys1763800001950 } from './1763800001950-passkeys.js';

/** Applied in order by `tb db migrate` and at service start. Later modules append theirs here. */
export const MIGRATIONS = [
  InitialRegistry1763800000000,
  PackageSearch1763800000100,
  PackageDeltas1763800000200,
  AdminArtifacts1763800000300,
  SearchScores1763800000400,
  BatchCoveringIndex1763800000500,
  SearchVocabulary1763800000600,
  SearchRankingScale1763800000700,
  ApiKeys1763800000800,
  GatewayAccounts1763800000900,
  WorkerAuth1763800001200,
  Mcp1763800001400,
  SearchFulltext1763800001500,
  SearchRankKeys1763800001600,
  SearchWordCounts1763800001700,
  GatewaySettings1763800001860,
  DropApiKeys1763800001880,
  GatewaySignupTier1763800001890,
  UserSettings1763800001900,
  GatewayLedger1763800001920,
  Passkeys1763800001950,
];
