-- ember's Lua prelude: builds the sandbox Redis 7.0 gives a script. Run
-- once per VM with (hidden, errh); `hidden` is the table through which the
-- Rust side talks to these functions (redis, run), and
-- errh is Redis's error handler (Rust: it reads the stack to name the
-- script's line).
local hidden, errh = ...
local error, type, select, rawget, tostring, setmetatable =
    error, type, select, rawget, tostring, setmetatable
-- Runs f(k, a) under Redis's error handler (EVAL passes nothing, FCALL
-- its KEYS and ARGV tables). EVAL's script takes no arguments, so it runs
-- as it is: no closure per run for the collector.
hidden.run = function(f, k, a)
    if k == nil then return xpcall(f, errh) end
    return xpcall(function() return f(k, a) end, errh)
end

-- The functions that raise errors are Rust's (`hidden.api`): a call to a
-- C function, even `return redis.call(...)`, keeps the script's frame on
-- the stack, so the error handler can name the script's line.
local redis = {}
for name, f in pairs(hidden.api) do redis[name] = f end
hidden.api = nil
-- redis.call and redis.pcall are set here for each run (they reach the
-- running command's context).
hidden.redis = redis
redis.error_reply = function(...)
    local e = ...
    if select('#', ...) ~= 1 or type(e) ~= 'string' then
        return {err = 'ERR wrong number or type of arguments'}
    end
    -- As Redis's luaPushErrorBuff: '-CODE msg' keeps its code, a text
    -- without a space gets ERR, and the message loses \r\n at its ends.
    if e:sub(1, 1) ~= '-' then e = '-' .. e end
    local space = e:find(' ', 1, true)
    local code, msg = 'ERR', e:sub(2)
    if space then code, msg = e:sub(2, space - 1), e:sub(space + 1) end
    msg = msg:gsub('^[\r\n]+', ''):gsub('[\r\n]+$', '')
    return {err = code .. ' ' .. msg}
end
redis.status_reply = function(...)
    local s = ...
    if select('#', ...) ~= 1 or type(s) ~= 'string' then
        return {err = 'ERR wrong number or type of arguments'}
    end
    return {ok = s}
end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
redis.replicate_commands = function() return true end
redis.breakpoint = function() return false end
redis.debug = function() end
redis.REDIS_VERSION = '7.0.15'
redis.REDIS_VERSION_NUM = 458767

-- The globals a script sees, as Redis 7.0 lists them.
local keep = {
    'assert', 'collectgarbage', 'coroutine', 'error', 'gcinfo', 'getmetatable',
    'ipairs', 'load', 'loadstring', 'math', 'next', 'pairs', 'pcall', 'rawequal',
    'rawget', 'rawset', 'select', 'setmetatable', 'string', 'table', 'tonumber',
    'tostring', 'type', 'unpack', 'xpcall', '_VERSION', 'bit', 'cjson',
    'cmsgpack', 'struct',
}
local real = {}
for _, name in ipairs(keep) do real[name] = _G[name] end
real.redis = redis
real.__redis__err__handler = errh

-- Readonly tables: a proxy whose writes fail with Redis's text (Redis
-- patches Lua for this; a stock 5.1 gets the same answers from
-- metatables).
local proxied = setmetatable({}, {__mode = 'k'})
-- What getmetatable answers for a readonly table: itself readonly.
local sealed = setmetatable({}, {
    __newindex = function() error('Attempt to modify a readonly table', 2) end,
    __metatable = false,
})
local function readonly(t)
    local proxy = {}
    proxied[proxy] = t
    return setmetatable(proxy, {
        __index = t,
        __newindex = function() error('Attempt to modify a readonly table', 2) end,
        __metatable = sealed,
    })
end
for _, name in ipairs({'redis', 'string', 'math', 'table', 'coroutine', 'bit', 'cjson', 'cmsgpack', 'struct'}) do
    if real[name] ~= nil then real[name] = readonly(real[name]) end
end

-- pairs and next see through the readonly proxies to the tables behind.
local next, pairs = next, pairs
real.pairs = function(t) return pairs(proxied[t] or t) end
real.next = function(t, k) return next(proxied[t] or t, k) end
-- A readonly table's metatable cannot be replaced either.
local raw_setmetatable = setmetatable
real.setmetatable = function(t, mt)
    if proxied[t] then error('Attempt to modify a readonly table', 2) end
    return raw_setmetatable(t, mt)
end
-- Binary chunks are refused, as Redis refuses them (they could break
-- the VM): loading one gives nil and a message.
local raw_loadstring, raw_load = loadstring, load
local function text_only(chunk)
    return type(chunk) ~= 'string' or chunk:byte(1) ~= 27
end
real.loadstring = function(s, name)
    if not text_only(s) then return nil, 'binary chunks are not allowed' end
    return raw_loadstring(s, name)
end
real.load = function(f, name)
    if type(f) == 'string' and not text_only(f) then return nil, 'binary chunks are not allowed' end
    return raw_load(f, name)
end

local env = setmetatable({}, {
    __index = function(_, k)
        local v = rawget(real, k)
        if v == nil then
            error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
        end
        return v
    end,
    __newindex = function() error('Attempt to modify a readonly table', 2) end,
    __metatable = sealed,
})
real._G = env
proxied[env] = real

-- The globals a library's code sees while FUNCTION LOAD runs it: a
-- `redis` with register_function and logging only (redis.call and the rest
-- are not there, as in Redis).
local function strict(t)
    return setmetatable({}, {
        __index = function(_, k)
            local v = rawget(t, k)
            if v == nil then
                error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
            end
            return v
        end,
        __newindex = function() error('Attempt to modify a readonly table', 2) end,
        __metatable = false,
    })
end
hidden.library_env = function(register)
    -- Set once the load is over: a function the library kept cannot
    -- register more (Redis's error, not a dead callback's).
    local loading = true
    local lredis = {
        register_function = function(...)
            if not loading then
                error('redis.register_function can only be called on FUNCTION LOAD command', 0)
            end
            return register(...)
        end,
        log = redis.log,
        LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
        REDIS_VERSION = redis.REDIS_VERSION, REDIS_VERSION_NUM = redis.REDIS_VERSION_NUM,
    }
    lredis = strict(lredis)
    -- Once loaded, the library's functions see the whole `redis` API and
    -- the globals; the load itself sees only the library API, as Redis's
    -- load globals hold nothing else.
    local env = setmetatable({}, {
        __index = function(_, k)
            if k == 'redis' then
                if loading then return lredis end
                return real.redis
            end
            local v = nil
            if not loading then v = rawget(real, k) end
            if v == nil then
                error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
            end
            return v
        end,
        __newindex = function() error('Attempt to modify a readonly table', 2) end,
        __metatable = false,
    })
    return env, function() loading = false end
end
return env, real
