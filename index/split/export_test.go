package split

// CheckPartition is checkPartition for the external tests.
var CheckPartition = checkPartition
