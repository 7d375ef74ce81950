"""Groups: which persona a message is for, whether it speaks, personas sharing a room, welcomes."""
