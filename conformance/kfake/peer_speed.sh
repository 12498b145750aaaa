#!/bin/sh
# Issue 15 item 4: rebalsim against kgo + kfake (testing/synctest) on the
# same crash scenario at 10, 100 and 300 members, one core. See
# TestPeerSpeed in peer_speed_test.go for what "the same" means.
cd "$(dirname "$0")" && GOMAXPROCS=1 REBALSIM_PEER_SPEED=1 go test -run TestPeerSpeed -v -count 1 -timeout 30m "$@"
