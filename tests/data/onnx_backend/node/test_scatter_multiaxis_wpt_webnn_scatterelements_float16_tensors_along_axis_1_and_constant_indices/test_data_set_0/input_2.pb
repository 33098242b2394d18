
BupdatesJf<3@