package server

import "github.com/eddy-streams/eddy/stream"

// parseXAdd parses XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold
// [LIMIT count]] *|id field value [field value ...]. Its checks run in
// Redis's order, all before the key is looked at: the options and the
// ID's syntax in argument order, the options as a whole, the field/value
// count, then the 0-0 ID.
func parseXAdd(args [][]byte) (stream.XAddArgs, string) {
	var a stream.XAddArgs
	t, noMk, idPos, errText := parseTrimOptions(args, true)
	if errText != "" {
		return a, errText
	}
	a.Trim, a.NoMkStream = t, noMk
	if idPos < len(args) {
		id, auto, seqAuto, err := stream.ParseAddID(args[idPos])
		if err != nil {
			return a, errInvalidStreamID
		}
		a.ID, a.Auto, a.SeqAuto = id, auto, seqAuto
	}
	if errText := checkTrim(t, true); errText != "" {
		return a, errText
	}
	fields := len(args) - idPos - 1
	if fields < 2 || fields%2 == 1 {
		return a, errWrongArity("xadd")
	}
	if !a.Auto && !a.SeqAuto && a.ID.IsZero() {
		return a, errXAddZero
	}
	a.Fields = args[idPos+1:]
	return a, ""
}

// cmdXAdd appends an entry and replies with its ID, or nil when
// NOMKSTREAM found no stream.
func cmdXAdd(ctx *cmdContext) {
	a, errText := parseXAdd(ctx.args)
	if errText != "" {
		ctx.w.Error(errText)
		return
	}
	id, ok, err := ctx.tx.XAdd(ctx.db, ctx.args[1], &a)
	switch {
	case err != nil:
		ctx.w.Error(errorText(err))
	case !ok:
		ctx.w.Null()
	default:
		ctx.w.ID(id)
	}
}
