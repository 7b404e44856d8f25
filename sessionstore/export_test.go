package sessionstore

import (
	"context"
	"sort"
)

// DriverNames lists the dialects the store has a driver for (tests only).
func DriverNames() []string {
	var out []string
	for n := range drivers {
		out = append(out, n.String())
	}
	sort.Strings(out)
	return out
}

// ServerCuts counts the rows of a compressed load that the database cut
// (tests only: the proof that the middle of an answer stays on the server).
func ServerCuts(s *Store, key string) (int, error) {
	sid, err := s.SessionUUID(key)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.drv.eachRow(context.Background(), s.db, rowsArgs{sid: sid, tenant: s.userID, limit: noLimit, cut: s.comp.TruncateLength()},
		func(r storedRow) error {
			if r.Length >= 0 {
				n++
			}
			return nil
		})
	return n, err
}
