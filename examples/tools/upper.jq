.text | ascii_upcase
