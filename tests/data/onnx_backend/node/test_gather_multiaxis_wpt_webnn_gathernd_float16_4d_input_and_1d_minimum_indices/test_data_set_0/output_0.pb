
BoutputJ!ÔOÔ