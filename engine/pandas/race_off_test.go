//go:build !race

package pandas

import "time"

const raceSlack time.Duration = 0
