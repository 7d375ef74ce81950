"""One turn of a conversation: a message in, the persona's reply out."""
