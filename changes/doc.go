// Package changes holds the change feed: the Change events the service
// publishes after each write commits (their ChangeKinds), the Feed that
// fans them out without blocking, and each subscriber's bounded
// Subscription. It is a leaf below procedures, whose Service owns the
// feed (Service.Changes) and publishes to it; the transports subscribe.
package changes
