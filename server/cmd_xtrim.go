package server

import "github.com/eddy-streams/eddy/stream"

// parseXTrim parses XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count].
func parseXTrim(args [][]byte) (stream.Trim, string) {
	t, _, _, errText := parseTrimOptions(args, false)
	if errText != "" {
		return t, errText
	}
	return t, checkTrim(t, false)
}

// cmdXTrim trims the stream and replies with the number of entries
// removed (0 for a missing key).
func cmdXTrim(ctx *cmdContext) {
	t, errText := parseXTrim(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	n, err := ctx.tx.XTrim(ctx.db, ctx.args[1], t)
	if err != nil {
		ctx.w.Error(errorText(err))
		return
	}
	ctx.w.Int(n)
}

// parseXDel parses the IDs of XDEL key id [id ...]; "-", "+" and "ms-*"
// are invalid. The error is that of the first invalid ID.
func parseXDel(args [][]byte) ([]stream.ID, string) {
	ids := make([]stream.ID, 0, len(args)-2)
	for _, arg := range args[2:] {
		id, ok := parseStrictID(arg)
		if !ok {
			return nil, errInvalidStreamID
		}
		ids = append(ids, id)
	}
	return ids, ""
}

// cmdXDel deletes entries and replies with how many existed. Redis looks
// the key up before it parses the IDs: a missing key is 0 and a wrong
// type WRONGTYPE whatever the IDs say.
func cmdXDel(ctx *cmdContext) {
	key := ctx.args[1]
	_, ok, err := ctx.tx.LastID(ctx.db, key)
	switch {
	case err != nil:
		ctx.w.Error(errorText(err))
		return
	case !ok:
		ctx.w.Int(0)
		return
	}
	ids, errText := parseXDel(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	n, err := ctx.tx.XDel(ctx.db, key, ids)
	if err != nil {
		ctx.w.Error(errorText(err))
		return
	}
	ctx.w.Int(n)
}

// cmdXLen replies with the number of entries (0 for a missing key).
func cmdXLen(ctx *cmdContext) {
	n, err := ctx.tx.XLen(ctx.db, ctx.args[1])
	if err != nil {
		ctx.w.Error(errorText(err))
		return
	}
	ctx.w.Int(n)
}

// parseXSetID parses XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id],
// in Redis's order: the ID, then each option with its own checks (the
// max-deleted ID is compared with the new last ID as soon as it is read).
func parseXSetID(args [][]byte) (stream.XSetIDArgs, string) {
	a := stream.XSetIDArgs{EntriesAdded: -1}
	id, ok := parseStrictID(args[2])
	if !ok {
		return a, errInvalidStreamID
	}
	a.ID = id
	for i := 3; i < len(args); i += 2 {
		more := len(args) - 1 - i
		switch {
		case argIs(args[i], "entriesadded") && more > 0:
			n, ok := parseRedisInt(args[i+1])
			if !ok {
				return a, errValueNotInteger
			}
			if n < 0 {
				return a, errEntriesAddedNegative
			}
			a.EntriesAdded = n
		case argIs(args[i], "maxdeletedid") && more > 0:
			md, ok := parseStrictID(args[i+1])
			if !ok {
				return a, errInvalidStreamID
			}
			if a.ID.Less(md) {
				return a, errXSetIDMaxDel
			}
			a.MaxDeleted = &md
		default:
			return a, errSyntax
		}
	}
	return a, ""
}

// cmdXSetID sets the stream's last ID (and counters) and replies OK.
func cmdXSetID(ctx *cmdContext) {
	a, errText := parseXSetID(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	if err := ctx.tx.XSetID(ctx.db, ctx.args[1], a); err != nil {
		ctx.w.Error(errorText(err))
		return
	}
	ctx.w.Simple("OK")
}
