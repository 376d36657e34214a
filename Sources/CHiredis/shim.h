// hiredis, the C client of Redis, for the Redis token store. No shims: the store calls
// redisCommandArgv, which Swift imports, and never the variadic redisCommand.
#include <hiredis/hiredis.h>
